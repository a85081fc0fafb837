from pathlib import Path
from typing import Any

from bot.llm.types import ToolCall
from bot.tools.base import Tool, ToolContext
from tests.agent.turn.test_runner import AddTool, CountingAdd, tool_messages
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness


class Silent(Tool):
    name = "silent"
    description = "Does something and says nothing."

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return ""


class Recorder(Tool):
    """Records what it was asked to do; changes things unless `read_only`."""

    description = "Write a note."
    parameters = {"type": "object", "properties": {"note": {"type": "string"}}}

    def __init__(self, name: str, read_only: bool) -> None:
        self.name = name
        self.read_only = read_only
        self.runs: list[dict[str, Any]] = []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.runs.append(args)
        return "done"


async def test_the_third_identical_call_is_refused_and_the_fifth_ends_the_turn(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    add = CountingAdd()
    same = ToolCalls((("add", {"a": 1, "b": 2}),))
    fake_llm.script(same, ToolCalls((("add", {"a": 2, "b": 2}),)), same, same, same, same, Text("never asked"))
    async with Harness(tmp_path, fake_llm, extra_tools=[add]) as bot:
        reply = await bot.ask("add them up")
    assert add.runs == [{"a": 1, "b": 2}, {"a": 2, "b": 2}, {"a": 1, "b": 2}]
    results = [m["content"] for m in tool_messages(fake_llm.requests[-1])]
    assert results[:3] == ["3", "4", "3"]
    assert "call number 3 of add" in results[3] and "Change course" in results[3]
    assert "call number 4 of add" in results[4]
    assert len(fake_llm.requests) == 6
    assert "I stopped" in reply and "add tool with the same arguments" in reply
    saved = bot.app.sessions.get("test:1").messages
    calls = [c["id"] for m in saved for c in m.get("tool_calls") or []]
    assert calls == [m["tool_call_id"] for m in saved if m["role"] == "tool"]


async def test_a_tool_that_returns_nothing_gives_the_model_empty(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("silent", {}),)), Text("done"))
    async with Harness(tmp_path, fake_llm, extra_tools=[Silent()]) as bot:
        await bot.ask("go")
    assert [m["content"] for m in tool_messages(fake_llm.requests[1])] == ["(empty)"]


async def test_an_empty_answer_after_a_failed_tool_names_the_tool(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("add", {"a": -1, "b": 1}),)), Text(""))
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        reply = await bot.ask("add -1 and 1")
    assert reply.startswith("I couldn't finish: the add tool failed")
    assert "nothing to add" not in reply


async def test_an_empty_answer_after_tools_that_worked_stays_quiet_about_failures(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.script(ToolCalls((("add", {"a": -1, "b": 1}),)), ToolCalls((("add", {"a": 1, "b": 1}),)), Text(""))
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        assert await bot.ask("add") == "I have nothing to add."


def test_arguments_that_are_not_valid_json_are_marked_repaired() -> None:
    assert ToolCall("c", "t", {"task": "mock-task"}, '{"task": "mock-task", ').repaired
    assert not ToolCall("c", "t", {"task": "mock-task"}, '{"task": "mock-task"}').repaired
    assert not ToolCall("c", "t", {}, "").repaired
    assert not ToolCall("c", "t", {}, "[1]", arguments_error="arguments must be a JSON object").repaired


async def test_cut_off_arguments_run_only_read_only_tools(tmp_path: Path, fake_llm: FakeLLM) -> None:
    writer, reader = Recorder("write_note", read_only=False), Recorder("read_note", read_only=True)
    cut = '{"note": "buy milk and '
    fake_llm.script(ToolCalls((("write_note", cut), ("read_note", cut))), Text("ok"))
    async with Harness(tmp_path, fake_llm, extra_tools=[writer, reader]) as bot:
        await bot.ask("note it")
    assert writer.runs == [] and reader.runs == [{"note": "buy milk and"}]
    refused, ran = (m["content"] for m in tool_messages(fake_llm.requests[1]))
    assert "arrived cut off or malformed" in refused and "Send the call again" in refused
    assert ran == "done"


def test_only_tools_that_change_nothing_are_read_only() -> None:
    from bot.tools import cron, files, message, recall, send_file, shell, skills, spawn
    from bot.tools.fetch import page as web
    from bot.tools.search import tool as search

    assert files.ReadFileTool.read_only and files.ListDirTool.read_only and skills.LoadSkillTool.read_only
    assert search.WebSearchTool.read_only and web.WebFetchTool.read_only and recall.RecallTool.read_only
    for tool in (
        files.WriteFileTool,
        files.EditFileTool,
        shell.ExecTool,
        message.MessageTool,
        send_file.SendFileTool,
        cron.CronTool,
        spawn.SpawnTool,
    ):
        assert not tool.read_only, tool


async def test_arguments_a_plugin_replaces_are_no_longer_a_repaired_guess() -> None:
    from bot.bus import ChatRef, Trust
    from bot.hooks.handlers import Hooks
    from bot.plugins import Replace
    from bot.tools.base import ToolRegistry

    async def send(message: Any) -> None:
        raise AssertionError("nothing is sent")

    writer = Recorder("write_note", read_only=False)
    hooks = Hooks()
    hooks.on("before_tool_call", lambda event: Replace({"note": "buy milk and bread"}))
    ctx = ToolContext(ChatRef("test", "1"), "u1", Trust.OWNER, "turn-1", send)
    cut = ToolCall("c1", "write_note", {"note": "buy milk and"}, '{"note": "buy milk and ')
    result = await ToolRegistry([writer], hooks=hooks).execute(cut, ctx)
    assert not result.is_error and writer.runs == [{"note": "buy milk and bread"}]
