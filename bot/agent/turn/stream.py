"""Turning one turn's model output into stream events; a reply that may still become NO_REPLY is held back."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bot.bus import ChatRef, new_id
from bot.events import EventBus, ReasoningDelta, StreamDelta, StreamEnded, StreamStarted

NO_REPLY = "NO_REPLY"
SUMMARY_CHARS = 120


def is_silent(text: str) -> bool:
    """Whether a reply is exactly the NO_REPLY token: the bot stays silent."""
    return text.strip() == NO_REPLY


def could_become_silent(text: str) -> bool:
    """Whether streamed text so far could still turn out to be NO_REPLY."""
    return NO_REPLY.startswith(text.strip())


def summarize(value: Any, limit: int = SUMMARY_CHARS) -> str:
    """A short one-line rendering of tool arguments or a result, for events and status lines."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class StreamEmitter:
    """Emits StreamStarted/Delta/Ended for each model call of a turn; silent while `muted()` is true.

    A call's text after an earlier call's starts with a blank line, so text sent beside a tool call stays its
    own paragraph for consumers that join every delta of a turn.
    """

    def __init__(
        self,
        events: EventBus,
        chat: ChatRef,
        turn_id: str,
        reply_to: str | None = None,
        muted: Callable[[], bool] = lambda: False,
        recipient: str | None = None,
    ) -> None:
        self._events = events
        self._chat = chat
        self._turn_id = turn_id
        self._reply_to = reply_to
        self._recipient = recipient
        self._muted = muted
        self._msg_id = ""
        self._held = ""
        self._released = False
        self._spoke = False
        self._fresh = True

    def begin(self) -> StreamEmitter:
        """Start a model call with a fresh msg_id; returns the handler for its text (and its reasoning)."""
        self._msg_id, self._held, self._released, self._fresh = new_id(), "", False, True
        self._events.emit(StreamStarted(self._chat, self._turn_id, self._msg_id, self._reply_to, self._recipient))
        return self

    def reasoning(self, text: str) -> None:
        """Pass on reasoning text of the current call."""
        self._events.emit(ReasoningDelta(self._chat, self._turn_id, self._msg_id, text))

    def end(self, finish_reason: str) -> None:
        """End the current call; held text that did not become NO_REPLY is released first."""
        if self._held and not is_silent(self._held):
            self._release(self._held)
        self._held = ""
        self._events.emit(StreamEnded(self._chat, self._turn_id, self._msg_id, finish_reason))

    def __call__(self, text: str) -> None:
        """Visible text of the current call."""
        if self._released:
            self._release(text)
            return
        self._held += text
        if not could_become_silent(self._held):
            held, self._held, self._released = self._held, "", True
            self._release(held)

    def _release(self, text: str) -> None:
        if not text or self._muted():
            return
        if self._fresh and self._spoke:
            text = "\n\n" + text
        self._fresh, self._spoke = False, True
        self._events.emit(StreamDelta(self._chat, self._turn_id, self._msg_id, text))
