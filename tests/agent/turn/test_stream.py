"""Stream events: one msg_id per model call, NO_REPLY never leaks, every event is plain JSON."""

import json
from pathlib import Path

from bot.agent.turn.stream import StreamEmitter, is_silent, summarize
from bot.bus import ChatRef
from bot.events import (
    EventBus,
    ReasoningDelta,
    StreamDelta,
    StreamEnded,
    StreamStarted,
    ToolCalled,
    ToolFinished,
    event_to_json,
)
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import Harness

CHAT = ChatRef("telegram", "42")


def record() -> tuple[EventBus, list]:
    events, seen = EventBus(), []
    events.subscribe(seen.append)
    return events, seen


def streamed_text(seen: list) -> str:
    return "".join(e.text for e in seen if isinstance(e, StreamDelta))


def test_each_model_call_gets_a_fresh_msg_id() -> None:
    events, seen = record()
    emitter = StreamEmitter(events, CHAT, "turn-1", reply_to="7")
    for text in ("Let me look.", "Found it."):
        emit = emitter.begin()
        emit(text)
        emitter.end("stop")
    starts = [e for e in seen if isinstance(e, StreamStarted)]
    assert len(starts) == 2 and starts[0].msg_id != starts[1].msg_id and starts[0].reply_to == "7"
    deltas = [e for e in seen if isinstance(e, StreamDelta)]
    assert [d.msg_id for d in deltas] == [s.msg_id for s in starts]
    assert [type(e) for e in seen] == [StreamStarted, StreamDelta, StreamEnded] * 2


def test_no_reply_is_never_streamed_not_even_a_prefix() -> None:
    events, seen = record()
    emitter = StreamEmitter(events, CHAT, "t")
    emit = emitter.begin()
    for piece in ("NO", "_RE", "PLY"):
        emit(piece)
    emitter.end("stop")
    assert streamed_text(seen) == ""
    assert is_silent(" NO_REPLY\n")


def test_text_that_only_starts_like_no_reply_is_released_whole() -> None:
    events, seen = record()
    emitter = StreamEmitter(events, CHAT, "t")
    emit = emitter.begin()
    for piece in ("NO", "_RE", "ALLY, that works", " fine"):
        emit(piece)
    emitter.end("stop")
    assert streamed_text(seen) == "NO_REALLY, that works fine"


def test_a_short_reply_held_back_is_released_when_the_call_ends() -> None:
    events, seen = record()
    emitter = StreamEmitter(events, CHAT, "t")
    emitter.begin()("NO")
    emitter.end("stop")
    assert streamed_text(seen) == "NO"


def test_muted_stream_emits_no_text() -> None:
    events, seen = record()
    emitter = StreamEmitter(events, CHAT, "t", muted=lambda: True)
    emitter.begin()("hello there")
    emitter.end("stop")
    assert streamed_text(seen) == "" and isinstance(seen[-1], StreamEnded)


def test_events_are_plain_json() -> None:
    samples = [
        StreamStarted(CHAT, "t", "m", "7"),
        StreamDelta(CHAT, "t", "m", "hi"),
        StreamEnded(CHAT, "t", "m", "stop"),
        ReasoningDelta(CHAT, "t", "m", "thinking"),
        ToolCalled(ChatRef("telegram", "42"), "web_search", "c1", "t", summarize({"query": "weather"})),
        ToolFinished(ChatRef("telegram", "42"), "web_search", "c1", False, 0.5, "t", "sunny"),
    ]
    for event in samples:
        data = json.loads(json.dumps(event_to_json(event)))
        assert data["type"] == type(event).__name__
    assert event_to_json(samples[1])["chat"] == {
        "channel": "telegram",
        "chat_id": "42",
        "thread_id": None,
        "account": None,
    }
    assert event_to_json(samples[4])["summary"] == '{"query": "weather"}'


def test_summaries_are_short_single_lines() -> None:
    summary = summarize({"text": "line one\nline two " * 50})
    assert "\n" not in summary and len(summary) <= 120 and summary.endswith("…")


async def test_think_blocks_become_reasoning_events_never_reply_text(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("<think>the user wants a number</think>It is 5.", chunk_delay=0.001))
    async with Harness(tmp_path, fake_llm) as bot:
        seen: list = []
        bot.app.events.subscribe(seen.append)
        assert await bot.ask("what is 2+3?", stream=True) == "It is 5."
    reasoning = "".join(e.text for e in seen if isinstance(e, ReasoningDelta))
    assert reasoning == "the user wants a number"
    assert streamed_text(seen) == "It is 5."
