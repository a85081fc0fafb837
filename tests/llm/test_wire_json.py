"""The request body encoder: the same JSON as encoding the body whole, with repeating parts reused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.llm.transports.wire_json import BodyEncoder

SYSTEM = {"role": "system", "content": "You are relaybot. Ünïcode stays as it is."}
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


@pytest.mark.parametrize(
    "body",
    [
        {"model": "m", "messages": [SYSTEM, {"role": "user", "content": "hi"}], "tools": TOOLS, "max_tokens": 5},
        {"model": "m", "messages": [SYSTEM]},
        {"model": "m", "messages": [{"role": "user", "content": "no system prompt"}]},
        {"model": "m", "messages": []},
        {"messages": [SYSTEM], "tools": TOOLS},
        {"tools": TOOLS},
        {"model": "m"},
        {},
    ],
)
def test_encoding_matches_encoding_the_body_whole(body: dict[str, Any]) -> None:
    assert json.loads(BodyEncoder().encode(body)) == body


def test_text_stays_utf8_characters_not_escapes() -> None:
    assert "Ünïcode".encode() in BodyEncoder().encode({"messages": [SYSTEM]})


def test_changed_tools_and_system_prompt_are_encoded_again() -> None:
    encoder = BodyEncoder()
    user = {"role": "user", "content": "hi"}
    assert json.loads(encoder.encode({"messages": [SYSTEM, user], "tools": TOOLS})) == {
        "messages": [SYSTEM, user],
        "tools": TOOLS,
    }
    other_tools = [*TOOLS, {"type": "function", "function": {"name": "exec"}}]
    other_system = {"role": "system", "content": "A persona's prompt."}
    body = {"messages": [other_system, user, {"role": "assistant", "content": "hello"}], "tools": other_tools}
    assert json.loads(encoder.encode(body)) == body


def test_history_messages_are_encoded_once_and_reused() -> None:
    encoder = BodyEncoder()
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    encoder.encode({"messages": [SYSTEM, *history]})
    cached = [encoder._message(m) for m in history]
    again = {"messages": [SYSTEM, *history, {"role": "user", "content": "and now?"}]}
    assert json.loads(encoder.encode(again)) == again
    assert all(a is b for a, b in zip(cached, (encoder._message(m) for m in history), strict=True))


def test_a_message_changed_in_place_is_encoded_again() -> None:
    encoder = BodyEncoder()
    said = {"role": "assistant", "content": "first words"}
    parts: list[dict[str, Any]] = [{"type": "text", "text": "look"}]
    shown = {"role": "user", "content": parts}
    encoder.encode({"messages": [SYSTEM, said, shown]})
    said["content"] = "second thoughts"
    said["name"] = "bot"
    parts.append({"type": "text", "text": "again"})
    body = {"messages": [SYSTEM, said, shown]}
    assert json.loads(encoder.encode(body)) == body


def test_the_cache_keeps_about_two_generations() -> None:
    encoder = BodyEncoder(generation_bytes=1000)
    for n in range(100):
        message = {"role": "user", "content": f"message {n}"}
        assert json.loads(encoder.encode({"messages": [message]})) == {"messages": [message]}
    assert len(encoder._recent) + len(encoder._older) <= 2 * 1000 // 200
