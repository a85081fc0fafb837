"""Hook points around a turn: agent_bootstrap, the command hook, agent_end (also when stopped or timed out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.hooks.hook_events import AgentBootstrap, AgentEnd, CommandIssued, Replace
from bot.sessions.session import Session
from tests.fakes.openai_server import FakeLLM, Hang, Text, ToolCalls
from tests.support.harness import Harness


async def test_agent_end_carries_the_turns_messages_and_usage(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ended: list[AgentEnd] = []
    fake_llm.script(ToolCalls((("list_dir", {}),)), Text("All listed."))
    async with Harness(tmp_path, fake_llm) as bot:
        bot.app.plugins.hooks.on("agent_end", ended.append)
        assert await bot.ask("list it") == "All listed."
    (end,) = ended
    assert end.outcome == "answered" and end.reply == "All listed."
    assert [m["role"] for m in end.messages] == ["user", "assistant", "tool", "assistant"]
    assert end.messages[-1]["content"] == "All listed."
    assert end.prompt_tokens == sum(u["prompt_tokens"] for u in fake_llm.reported) > 0
    assert end.completion_tokens == sum(u["completion_tokens"] for u in fake_llm.reported) > 0


async def test_agent_end_fires_when_stop_cancels_the_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ended: list[AgentEnd] = []
    fake_llm.script(Hang())
    async with Harness(tmp_path, fake_llm) as bot:
        bot.app.plugins.hooks.on("agent_end", ended.append)
        await bot.send("take forever")
        await fake_llm.wait_for_requests(1)
        assert await bot.ask("/stop") == "Stopped."
        await bot.app.loop.drain(5)  # the cancelled turn ends (and runs its hook) as the lane lets go of it
    assert [(e.outcome, e.reply) for e in ended] == [("stopped", None)]
    assert [m["role"] for m in ended[0].messages] == ["user"]


async def test_agent_end_fires_when_a_shutdown_cancels_the_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ended: list[AgentEnd] = []
    fake_llm.script(Hang())
    async with Harness(tmp_path, fake_llm) as bot:
        bot.app.plugins.hooks.on("agent_end", ended.append)
        await bot.send("take forever")
        await fake_llm.wait_for_requests(1)
    assert [(e.outcome, e.reply) for e in ended] == [("shut down", None)]


async def test_agent_end_fires_when_the_turn_times_out(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ended: list[AgentEnd] = []
    fake_llm.script(Hang())
    async with Harness(tmp_path, fake_llm, agent={"turn_timeout": 0.2}) as bot:
        bot.app.plugins.hooks.on("agent_end", ended.append)
        reply = await bot.ask("take forever")
    assert [e.outcome for e in ended] == ["timed out"] and ended[0].reply == reply


async def test_new_reset_and_stop_reach_the_command_hook(tmp_path: Path, fake_llm: FakeLLM) -> None:
    issued: list[CommandIssued] = []
    async with Harness(tmp_path, fake_llm) as bot:
        bot.app.plugins.hooks.on("command", issued.append)
        assert await bot.ask("/stop") == "Nothing to stop."
        await bot.ask("/new")
        await bot.ask("/reset@relaybot")
        await bot.ask("hello")
    assert [(e.command, e.role, e.chat.session_key) for e in issued] == [
        ("stop", "owner", "test:1"),
        ("new", "owner", "test:1"),
        ("reset", "owner", "test:1"),
    ]


async def test_agent_bootstrap_adds_and_removes_prompt_files(tmp_path: Path, fake_llm: FakeLLM) -> None:
    offered: list[tuple[str, ...]] = []

    def choose(event: AgentBootstrap) -> Replace:
        offered.append(event.files)
        return Replace([*(name for name in event.files if name != "SOUL.md"), "notes/extra.md", "../outside.md"])

    async with Harness(tmp_path, fake_llm) as bot:
        workspace = bot.config.workspace
        (workspace / "SOUL.md").write_text("SOUL-MARKER")
        (workspace / "notes").mkdir()
        (workspace / "notes" / "extra.md").write_text("EXTRA-MARKER")
        (workspace.parent / "outside.md").write_text("OUTSIDE-MARKER")
        bot.app.plugins.hooks.on("agent_bootstrap", choose)
        await bot.ask("hello")
    prompt = fake_llm.requests[-1]["messages"][0]["content"]
    assert offered == [("AGENTS.md", "SOUL.md", "USER.md", "TOOLS.md")]
    assert "## notes/extra.md\n\nEXTRA-MARKER" in prompt
    assert "SOUL-MARKER" not in prompt and "OUTSIDE-MARKER" not in prompt


async def test_a_turn_reads_its_session_once_when_no_plugin_hears_agent_end(
    tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.script(Text("Hello."))
    async with Harness(tmp_path, fake_llm) as bot:
        sessions, reads = bot.app.sessions, []
        load, get = sessions.load, sessions.get

        async def counted_load(key: str) -> Session:
            reads.append(key)
            return await load(key)

        def counted_get(key: str) -> Session:
            reads.append(key)
            return get(key)

        monkeypatch.setattr(sessions, "load", counted_load)
        monkeypatch.setattr(sessions, "get", counted_get)
        assert await bot.ask("hi") == "Hello."
        await bot.app.loop.drain(5)
    assert len(reads) == 1  # with Redis, each read of a session is a round trip
