"""Reading chat completion requests: the text, the session or stateless mode, and the streaming options."""

from __future__ import annotations

import pytest
from aiohttp import web

from bot.bus import EarlierMessage
from channels.api.openai.request import STATELESS_SESSION, parse_completion


def test_a_lone_user_message_runs_in_the_default_session() -> None:
    asked = parse_completion({"messages": [{"role": "user", "content": "hi"}]})
    assert (asked.text, asked.session, asked.conversation, asked.stream) == ("hi", None, (), False)


def test_earlier_messages_without_user_make_a_stateless_call() -> None:
    asked = parse_completion(
        {
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "first"}]},
                {"role": "assistant", "content": None, "tool_calls": []},
                {"role": "assistant", "content": "answer"},
                {"role": "user", "content": "second"},
            ],
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    assert asked.session == STATELESS_SESSION and asked.text == "second"
    assert asked.conversation == (
        EarlierMessage("system", "be brief"),
        EarlierMessage("user", "first"),
        EarlierMessage("assistant", "answer"),
    )
    assert asked.stream and asked.include_usage


def test_the_user_field_keeps_the_session_and_ignores_earlier_messages() -> None:
    messages = [{"role": "system", "content": "x"}, {"role": "user", "content": "hi"}]
    asked = parse_completion({"messages": messages, "user": "alice"})
    assert asked.session == "alice" and asked.conversation == ()


@pytest.mark.parametrize("body", [None, [], {"messages": [{"role": "system", "content": "x"}]}, {"messages": "hi"}])
def test_a_request_without_user_text_is_refused(body: object) -> None:
    with pytest.raises(web.HTTPBadRequest):
        parse_completion(body)
