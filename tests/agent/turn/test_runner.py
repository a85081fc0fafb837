from pathlib import Path
from typing import Any

from bot.errors import ToolError
from bot.events import StreamDelta
from bot.llm.types import CUT_NOTE, LENGTH_NOTE
from bot.tools.base import Tool, ToolContext
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness


class AddTool(Tool):
    name = "add"
    description = "Add two integers."
    parameters = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if args["a"] < 0:
            raise ToolError("negative numbers are not supported")
        return str(args["a"] + args["b"])


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def test_tool_result_is_paired_with_its_call(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("add", {"a": 2, "b": 3}),)), Text("It is 5."))
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        assert await bot.ask("what is 2+3?") == "It is 5."
    first, second = fake_llm.requests
    assert "add" in [tool["function"]["name"] for tool in first["tools"]]
    call_id = second["messages"][-2]["tool_calls"][0]["id"]
    assert tool_messages(second) == [{"role": "tool", "tool_call_id": call_id, "name": "add", "content": "5"}]


async def test_tool_context_survives_into_the_next_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("add", {"a": 1, "b": 1}),)), Text("2"), Text("ok"))
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        await bot.ask("1+1?")
        await bot.ask("thanks")
    assert tool_messages(fake_llm.requests[2])[0]["content"] == "2"


async def test_bad_tool_calls_become_errors_the_model_can_recover_from(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(
        ToolCalls(
            (
                ("nope", {}),
                ("add", {"a": "two"}),
                ("add", '{"a": 1, "b": '),
                ("add", {"a": -1, "b": 1}),
            )
        ),
        Text("sorry, let me fix that"),
    )
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        assert await bot.ask("go") == "sorry, let me fix that"
    results = [m["content"] for m in tool_messages(fake_llm.requests[1])]
    assert "no tool named 'nope'" in results[0] and "add" in results[0]
    assert "invalid arguments for add" in results[1]
    assert "arrived cut off or malformed" in results[2] and "Send the call again" in results[2]
    assert results[3] == "Error: negative numbers are not supported"


async def test_iteration_limit_ends_with_an_honest_message(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(*[ToolCalls((("add", {"a": 1, "b": 1}),))] * 3)
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()], agent={"max_iterations": 3}) as bot:
        reply = await bot.ask("loop forever")
    assert "stopped after 3 steps" in reply
    assert len(fake_llm.requests) == 3


async def test_system_prompt_has_identity_time_workspace_and_bootstrap_files(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with Harness(tmp_path, fake_llm) as bot:
        (bot.config.workspace / "SOUL.md").write_text("Be kind to ducks.")
        (bot.config.workspace / "memory").mkdir()
        (bot.config.workspace / "memory" / "MEMORY.md").write_text("The owner likes tea.")
        await bot.ask("hi", chat="telegram:7", sender="7", is_direct=True)
    system, *_, user = fake_llm.requests[0]["messages"]
    assert "relaybot" in system["content"] and "Timezone: UTC" in system["content"]
    assert str(bot.config.workspace) in system["content"]
    assert "Be kind to ducks." in system["content"] and "The owner likes tea." in system["content"]
    assert user["content"].startswith("[telegram DM 7 · from 7 · ")


class CountingAdd(AddTool):
    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.runs.append(args)
        return await super().run(args, ctx)


def streamed(bot: Harness) -> list[str]:
    deltas: list[str] = []
    bot.app.events.subscribe(lambda event: deltas.append(event.text) if isinstance(event, StreamDelta) else None)
    return deltas


async def test_tool_calls_cut_at_max_tokens_are_not_run_and_the_model_is_asked_again(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    tool = CountingAdd()
    fake_llm.script(ToolCalls((("add", '{"a": 2, "b'),), finish_reason="length"), Text("It is 5."))
    async with Harness(tmp_path, fake_llm, extra_tools=[tool]) as bot:
        assert await bot.ask("what is 2+3?") == "It is 5."
    assert tool.runs == []
    [result] = tool_messages(fake_llm.requests[1])
    assert "max_tokens" in result["content"] and "not run" in result["content"]


async def test_tool_calls_cut_at_max_tokens_twice_end_the_turn_saying_so(tmp_path: Path, fake_llm: FakeLLM) -> None:
    tool = CountingAdd()
    cut = ToolCalls((("add", '{"a": 2, "b'),), content="Adding now.", finish_reason="length")
    fake_llm.script(cut, cut, Text("never asked"))
    async with Harness(tmp_path, fake_llm, extra_tools=[tool]) as bot:
        assert await bot.ask("what is 2+3?") == f"Adding now.\n\n{LENGTH_NOTE}"
    assert tool.runs == [] and len(fake_llm.requests) == 2


async def test_text_beside_a_tool_call_streams_as_its_own_paragraph(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("add", {"a": 2, "b": 3}),), content="Let me add."), Text("It is 5."))
    async with Harness(tmp_path, fake_llm, extra_tools=[AddTool()]) as bot:
        deltas = streamed(bot)
        assert await bot.ask("what is 2+3?", stream=True) == "It is 5."
    assert "".join(deltas) == "Let me add.\n\nIt is 5."


async def test_a_cut_stream_keeps_its_text_and_is_recorded_as_incomplete(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("the first part and the rest", cut_after=2))
    async with Harness(tmp_path, fake_llm) as bot:
        deltas = streamed(bot)
        reply = await bot.ask("tell me", stream=True)
        last = bot.app.sessions.get("test:1").messages[-1]
    assert reply == "".join(deltas) == f"the first part a\n\n{CUT_NOTE}"
    assert last == {"role": "assistant", "content": reply, "incomplete": True}
