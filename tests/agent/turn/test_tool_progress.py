"""A tool's progress becomes update events: the first at once, later ones joined per interval, cut to size."""

from __future__ import annotations

from bot.agent.turn.tool_progress import ToolProgress
from bot.bus import ChatRef, Trust
from bot.events import EventBus, ToolUpdated
from bot.llm.types import ToolCall
from bot.tools.base import ToolContext
from tests.support.harness import next_event


async def _noop(message: object) -> None: ...


def _progress(events: EventBus, now: list[float], interval: float = 0.05) -> ToolProgress:
    ctx = ToolContext(ChatRef("api", "me"), "me", Trust.OWNER, "turn-1", _noop)
    return ToolProgress(events, ctx, ToolCall("c1", "exec", {}), interval, lambda: now[0])


async def test_reports_within_the_interval_go_out_together_once_it_passed() -> None:
    events, seen, now = EventBus(), [], [100.0]
    events.subscribe(seen.append, ToolUpdated)
    progress = _progress(events, now)
    progress("one\n")
    progress("two\n")
    progress("three\n")
    assert [e.text for e in seen] == ["one\n"] and seen[0].turn_id == "turn-1" and seen[0].call_id == "c1"
    now[0] += 1
    joined = await next_event(events, ToolUpdated)
    assert joined.text == "two\nthree\n"


async def test_an_update_keeps_the_newest_output_within_the_summary_size() -> None:
    events, seen = EventBus(), []
    events.subscribe(seen.append, ToolUpdated)
    _progress(events, [0.0])("x" * 500 + "the end")
    assert len(seen[0].text) == 120 and seen[0].text.endswith("the end") and seen[0].text.startswith("…")


async def test_what_is_held_when_the_call_ends_is_dropped() -> None:
    events, seen = EventBus(), []
    events.subscribe(seen.append, ToolUpdated)
    progress = _progress(events, [0.0], interval=60)
    progress("first")
    progress("held")
    progress.close()
    assert [e.text for e in seen] == ["first"]
