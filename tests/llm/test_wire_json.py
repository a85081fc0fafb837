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


def test_history_is_kept_encoded_and_the_turns_own_message_is_not() -> None:
    encoder = BodyEncoder()
    said = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    first = {"messages": [SYSTEM, *said, {"role": "user", "content": "and now?"}]}
    assert json.loads(encoder.encode(first)) == first
    assert encoder.kept == 2
    said += [first["messages"][-1], {"role": "assistant", "content": "now this"}]
    second = {"messages": [SYSTEM, *said, {"role": "user", "content": "and then?"}], "tools": TOOLS}
    assert json.loads(encoder.encode(second)) == second
    assert encoder.kept == 4


def test_a_message_changed_in_place_is_encoded_again() -> None:
    encoder = BodyEncoder()
    said = {"role": "assistant", "content": "first words"}
    parts: list[dict[str, Any]] = [{"type": "text", "text": "look"}]
    shown = {"role": "user", "content": parts}
    last = {"role": "user", "content": "well?"}
    encoder.encode({"messages": [SYSTEM, said, shown, last]})
    said["content"] = "second thoughts"
    said["name"] = "bot"
    parts.append({"type": "text", "text": "again"})
    body = {"messages": [SYSTEM, said, shown, last]}
    assert json.loads(encoder.encode(body)) == body


def test_a_key_renamed_in_place_is_encoded_again() -> None:
    encoder = BodyEncoder()
    said = {"role": "assistant", "content": "first words"}
    last = {"role": "user", "content": "well?"}
    encoder.encode({"messages": [SYSTEM, said, last]})
    said["name"] = said.pop("content")
    body = {"messages": [SYSTEM, said, last]}
    assert json.loads(encoder.encode(body)) == body


def test_the_cache_keeps_about_two_generations() -> None:
    encoder = BodyEncoder(generation_bytes=1000)
    for n in range(100):
        history = [{"role": "user", "content": f"message {n}"}, {"role": "assistant", "content": f"reply {n}"}]
        body = {"messages": [*history, {"role": "user", "content": "next"}]}
        assert json.loads(encoder.encode(body)) == body
    assert encoder.kept <= 2 * 1000 // 200


def test_a_conversation_that_grows_changes_or_slides_is_encoded_as_it_is_each_turn() -> None:
    encoder = BodyEncoder()
    said: list[dict[str, Any]] = []
    for n in range(12):
        body = {"messages": [SYSTEM, *said, {"role": "user", "content": f"question {n}"}]}
        assert json.loads(encoder.encode(body)) == body
        said += [body["messages"][-1], {"role": "assistant", "content": f"answer {n}"}]
        if n == 5:
            said[3]["content"] = "an answer edited in place"
        if n == 7:
            said.append({"role": "assistant", "content": None, "tool_calls": [{"id": "1", "type": "function"}]})
            said.append({"role": "tool", "tool_call_id": "1", "content": "done"})
        if n == 9:
            del said[:6]  # the window moved on


def test_each_chats_system_prompt_is_kept_apart() -> None:
    encoder = BodyEncoder()
    prompts = [{"role": "system", "content": f"You are relaybot. Chat {n} remembers {n}."} for n in range(3)]
    for _ in range(2):
        for prompt in prompts:
            body = {"messages": [dict(prompt), {"role": "user", "content": "hi"}]}
            assert json.loads(encoder.encode(body)) == body
    named = {"role": "system", "content": prompts[0]["content"], "name": "persona"}
    body = {"messages": [named, {"role": "user", "content": "hi"}]}
    assert json.loads(encoder.encode(body)) == body
