import asyncio
from pathlib import Path
from typing import Any

import pytest

from bot.agent.turn.interruption import closing_results, dead_letter_reason, human_duration
from bot.errors import (
    BudgetExceeded,
    ContextOverflow,
    MessageTooLarge,
    ModelNotFound,
    PromptTooLarge,
    ProviderAuthError,
    ProviderUnavailable,
    ProviderUnreachable,
    RequestRejected,
)
from bot.sessions.store import SessionStore
from bot.tools.base import Tool, ToolContext
from tests.fakes.openai_server import FakeLLM, ToolCalls
from tests.support.harness import Harness


class WaitTool(Tool):
    """Blocks until released; `started` is set once it runs."""

    name = "wait"
    description = "Wait for something slow."

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.started.set()
        await self.release.wait()
        return "waited"


def round_of_calls() -> ToolCalls:
    return ToolCalls((("write_file", {"path": "notes.txt", "content": "done"}), ("wait", {}), ("wait", {})))


async def test_stop_keeps_finished_calls_and_closes_the_rest(tmp_path: Path, fake_llm: FakeLLM) -> None:
    waiter = WaitTool()
    fake_llm.script(round_of_calls())
    async with Harness(tmp_path, fake_llm, extra_tools=[waiter]) as bot:
        await bot.send("write the notes, then wait")
        await asyncio.wait_for(waiter.started.wait(), 30)  # the first call imports litellm
        assert await bot.ask("/stop") == "Stopped."
        await bot.ask("did you write the notes?")
    assert (bot.config.workspace / "notes.txt").read_text() == "done"
    request = fake_llm.requests[-1]["messages"]
    calls = next(m for m in request if m.get("tool_calls"))
    results = [m for m in request if m["role"] == "tool"]
    assert [c["function"]["name"] for c in calls["tool_calls"]] == ["write_file", "wait", "wait"]
    assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls["tool_calls"]]
    assert "notes.txt" in results[0]["content"]
    assert [r["content"] for r in results[1:]] == ["Not finished: cancelled by /stop."] * 2


async def test_a_turn_past_its_timeout_is_cancelled_and_the_user_told(tmp_path: Path, fake_llm: FakeLLM) -> None:
    # litellm's first call in a process loads modules for seconds: spend them outside the timed turn.
    async with Harness(tmp_path / "warm", fake_llm) as warm:
        await warm.reply_to(await warm.send("warm up"), timeout=60)
    waiter = WaitTool()
    fake_llm.script(round_of_calls())
    async with Harness(tmp_path, fake_llm, extra_tools=[waiter], agent={"turn_timeout": "1s"}) as bot:
        reply = await bot.reply_to(await bot.send("write the notes, then wait"))
        assert not bot.app.loop.is_busy("test:1")
        await bot.ask("and now?")
    assert reply.kind == "error" and len(reply.text.splitlines()) == 1
    assert "1s limit" in reply.text and waiter.started.is_set()
    results = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "notes.txt" in results[0]
    assert results[1:] == ["Not finished: the turn ran past its 1s time limit and was cancelled."] * 2


class BrokenTool(Tool):
    """A buggy plugin tool: its result cannot be stored, which crashes the turn."""

    name = "broken"
    description = "Return something that is not text."

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        return object()  # type: ignore[return-value]


async def test_a_crashed_turn_keeps_finished_calls(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("write_file", {"path": "a.txt", "content": "x"}), ("broken", {}))))
    async with Harness(tmp_path, fake_llm, extra_tools=[BrokenTool()]) as bot:
        reply = await bot.reply_to(await bot.send("go"), timeout=30)
        await bot.ask("what happened?")
    assert reply.kind == "error"
    results = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "a.txt" in results[0]
    assert results[1] == "Not finished: the turn crashed before this call completed."


@pytest.mark.parametrize(("seconds", "text"), [(600, "10m"), (3600, "1h"), (90, "90s"), (0.3, "0.3s")])
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


def test_a_round_that_moved_on_has_nothing_to_close() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    done = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "x", "content": "ok"},
    ]
    assert closing_results(done, "why") == []
    assert closing_results(done[:2], "why") == [{"role": "tool", "tool_call_id": "c1", "name": "x", "content": "why"}]


async def test_calls_left_open_by_a_dead_process_are_closed_on_the_next_turn(tmp_path: Path, fake_llm: FakeLLM) -> None:
    calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        for i, name in enumerate(["write_file", "wait"])
    ]
    store = SessionStore(tmp_path / "state" / "sessions")
    store.append(
        store.get("test:1"),
        [
            {"role": "user", "content": "write the notes, then wait"},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c0", "name": "write_file", "content": "Wrote notes.txt"},
        ],
    )  # what a process killed mid-round leaves behind
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.ask("still there?")
    results = [m["content"] for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert results == [
        "Wrote notes.txt",
        "Not finished: the bot stopped (crash or restart) before this call completed.",
    ]


@pytest.mark.parametrize(
    "error",
    [
        ProviderUnavailable("503"),
        ProviderUnreachable("127.0.0.1:9", "refused"),
        ProviderAuthError("401"),
        ModelNotFound("404"),
        PromptTooLarge("too big"),
        KeyError("oops"),
    ],
)
def test_a_turn_failing_for_a_reason_the_owner_or_time_mends_leaves_a_dead_letter(error: Exception) -> None:
    reason = dead_letter_reason(error)
    assert reason is not None and type(error).__name__ in reason


@pytest.mark.parametrize(
    "error",
    [BudgetExceeded("spent"), ContextOverflow("long"), MessageTooLarge("huge"), RequestRejected("400")],
)
def test_a_turn_failing_for_a_reason_the_sender_mends_is_answered_and_done(error: Exception) -> None:
    assert dead_letter_reason(error) is None
