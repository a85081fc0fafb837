"""Reading an OpenAI chat completion request: the new user text, the mode it asks for, and how to answer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from aiohttp import web

from bot.bus import EarlierMessage

ROLES: dict[str, Literal["system", "user", "assistant"]] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "assistant": "assistant",
}
STATELESS_SESSION = "stateless"
"""The session a token's stateless calls are logged in; its own history is never read back."""


@dataclass(frozen=True, slots=True)
class CompletionRequest:
    """What a request asks: `text` answered in session `user`, or, stateless, after the client's `conversation`."""

    text: str
    user: str | None
    conversation: tuple[EarlierMessage, ...]
    stream: bool
    include_usage: bool

    @property
    def session(self) -> str | None:
        """The session to run in: `user`, the stateless log, or None for the token's default session."""
        if self.user is not None:
            return self.user
        return STATELESS_SESSION if self.conversation else None


def _bad_request(message: str) -> web.HTTPBadRequest:
    error = {"message": message, "type": "invalid_request_error"}
    return web.HTTPBadRequest(text=json.dumps({"error": error}), content_type="application/json")


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        parts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
        content = "\n".join(str(p.get("text", "")) for p in parts)
    return content if isinstance(content, str) else ""


def parse_completion(body: Any) -> CompletionRequest:
    """The request read from its JSON body; HTTPBadRequest when it has no user message with text.

    With `user` set the session keeps the history and earlier messages are ignored (they are the session's);
    without it, messages before the last user message (system prompts, earlier turns) make a stateless call.
    """
    if not isinstance(body, dict):
        body = {}
    messages = body.get("messages")
    messages = [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    text = _text_of(messages[last].get("content")) if last is not None else ""
    if last is None or not text.strip():
        raise _bad_request("messages needs a user message with text")
    user = body.get("user") if isinstance(body.get("user"), str) and body["user"].strip() else None
    earlier = (
        EarlierMessage(ROLES[m["role"]], said)
        for m in messages[:last]
        if m.get("role") in ROLES and (said := _text_of(m.get("content"))).strip()
    )
    options = body.get("stream_options")
    return CompletionRequest(
        text,
        user,
        () if user is not None else tuple(earlier),
        bool(body.get("stream")),
        isinstance(options, dict) and bool(options.get("include_usage")),
    )
