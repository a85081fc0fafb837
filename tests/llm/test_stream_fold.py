"""Folding a stream: text shown per read, reasoning and tool call pieces in place, the same read fast or slow."""

from typing import Any

import pytest

from bot.llm.stream_chunks import wire_delta
from bot.llm.stream_fold import StreamFold
from bot.llm.types import Usage


def chunk(delta: dict[str, Any] | None = None, finish_reason: str | None = None, **extra: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish_reason}]
    return {"id": "c1", "object": "chat.completion.chunk", "choices": choices, **extra}


def call_piece(index: int, arguments: str, call_id: str | None = None, name: str | None = None) -> dict[str, Any]:
    function = {"arguments": arguments} | ({"name": name} if name else {})
    return {"index": index, "function": function} | ({"id": call_id, "type": "function"} if call_id else {})


class Seen:
    """What a fold showed and passed on as reasoning, in order."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def fold(self) -> StreamFold:
        return StreamFold(self.shown, self.thought)

    def shown(self, text: str) -> None:
        self.log.append(("shown", text))

    def thought(self, text: str) -> None:
        self.log.append(("thought", text))


USAGE = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15, "prompt_tokens_details": {"cached_tokens": 4}}
STREAMS: dict[str, list[dict[str, Any]]] = {
    "text": [chunk({"role": "assistant", "content": ""}), chunk({"content": "Hel"}), chunk({"content": "lo"})],
    "null extras": [chunk({"content": "a", "tool_calls": None, "reasoning_content": None, "refusal": None})],
    "think block": [chunk({"content": "<thi"}), chunk({"content": "nk>hmm</think>Yes"})],
    "reasoning between text": [
        chunk({"content": "one "}),
        chunk({"reasoning_content": "why"}),
        chunk({"content": "two"}),
        chunk({"provider_specific_fields": {"thinking": "more"}}),
    ],
    "tool calls": [
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [call_piece(0, '{"q": ', "call_a", "lookup")]}),
        chunk({"tool_calls": [call_piece(1, "", "call_b", "clock")]}),
        chunk({"tool_calls": [call_piece(0, '"x"}')]}),
        chunk({}, "tool_calls"),
    ],
    "finish and usage": [chunk({"content": "done"}), chunk({}, "length"), chunk(None, usage=USAGE)],
    "usage beside text": [chunk({"content": "hi"}, usage=USAGE)],
    "no choices": [chunk(None), {"choices": [{"index": 0}]}],
}


def folded(stream: list[dict[str, Any]], batches: list[list[dict[str, Any]]]) -> tuple[Any, ...]:
    seen = Seen()
    fold = seen.fold()
    for batch in batches:
        fold.wire(batch)
    fold.flush()
    return fold.text(), fold.calls(), fold.finish_reason, fold.usage, seen.log


@pytest.mark.parametrize("name", STREAMS)
def test_a_read_of_many_chunks_folds_to_what_its_chunks_fold_to_one_by_one(name: str) -> None:
    stream = STREAMS[name]
    text, calls, finish_reason, usage, _ = folded(stream, [stream])
    assert (text, calls, finish_reason, usage) == folded(stream, [[one] for one in stream])[:4]


@pytest.mark.parametrize("name", STREAMS)
def test_the_fast_read_of_text_chunks_matches_the_full_read_of_every_field(name: str) -> None:
    stream = STREAMS[name]
    text, _, finish_reason, usage, _ = folded(stream, [stream])
    deltas = [wire_delta(one) for one in stream]
    assert text == "".join(delta.content for delta in deltas)
    assert finish_reason == next((d.finish_reason for d in reversed(deltas) if d.finish_reason), "stop")
    assert usage == next((d.usage for d in reversed(deltas) if d.usage is not None), Usage())


def test_text_of_one_read_is_shown_in_one_piece() -> None:
    *_, log = folded(STREAMS["text"], [STREAMS["text"]])
    assert log == [("shown", "Hello")]


def test_reasoning_between_text_keeps_its_place() -> None:
    stream = STREAMS["reasoning between text"]
    text, *_, log = folded(stream, [stream])
    assert text == "one two"
    assert log == [("shown", "one "), ("thought", "why"), ("shown", "two"), ("thought", "more")]


def test_a_think_block_split_across_chunks_is_reasoning() -> None:
    stream = STREAMS["think block"]
    *_, log = folded(stream, [[one] for one in stream])
    assert log == [("thought", "hmm"), ("shown", "Yes")]


def test_tool_call_pieces_in_one_read_join_by_index() -> None:
    stream = STREAMS["tool calls"]
    text, calls, finish_reason, *_ = folded(stream, [stream])
    assert text == ""
    assert [(c.id, c.name, c.arguments, c.raw_arguments) for c in calls] == [
        ("call_a", "lookup", {"q": "x"}, '{"q": "x"}'),
        ("call_b", "clock", {}, ""),
    ]
    assert finish_reason == "tool_calls"


def test_the_usage_chunk_and_the_finish_reason_are_kept() -> None:
    stream = STREAMS["finish and usage"]
    text, _, finish_reason, usage, _ = folded(stream, [stream])
    assert (text, finish_reason, usage) == ("done", "length", Usage(12, 3, 4))
