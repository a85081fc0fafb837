"""Typed events about what the bot is doing, for logs, the CLI and UIs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from bot.bus import AboutChat, ChatRef

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TurnStarted(AboutChat):
    """A turn began; `turn_id` is its run id (its last message's id), `message_ids` every message it carries.

    `text` is what the turn answers (its messages' texts), for telemetry that captures content.
    """

    chat: ChatRef
    turn_id: str
    message_ids: tuple[str, ...] = ()
    text: str = ""


@dataclass(frozen=True, slots=True)
class TurnFinished(AboutChat):
    """A turn ended; `replied` is False when no final reply follows (stopped, or answered through `message`).

    `text` is the reply it is about to send (empty when none), for telemetry that captures content.
    """

    chat: ChatRef
    turn_id: str
    outcome: str
    iterations: int
    duration: float
    replied: bool = True
    text: str = ""


@dataclass(frozen=True, slots=True)
class LLMCalled(AboutChat):
    """One model call ended; `turn_id` names the turn (the run) it was made for, when it was made for one.

    `cached_tokens` are the prompt tokens the provider read from its cache (priced lower). `outcome` is `ok`, or
    for a call that failed the kind of failure (the error class: `ProviderUnavailable`, `RequestRejected`, …).
    """

    chat: ChatRef
    model: str
    prompt_tokens: int
    completion_tokens: int
    duration: float
    turn_id: str = ""
    cached_tokens: int = 0
    outcome: str = "ok"


@dataclass(frozen=True, slots=True)
class StreamStarted(AboutChat):
    """One model call of a turn began streaming; `msg_id` is fresh per call.

    `reply_to` is the platform id of the message answered and `recipient` its sender, for platforms whose live
    replies are addressed (Slack streams to one user).
    """

    chat: ChatRef
    turn_id: str
    msg_id: str
    reply_to: str | None = None
    recipient: str | None = None


@dataclass(frozen=True, slots=True)
class StreamDelta(AboutChat):
    """Visible reply text, in order; never part of a NO_REPLY or of a `<think>` block."""

    chat: ChatRef
    turn_id: str
    msg_id: str
    text: str


@dataclass(frozen=True, slots=True)
class StreamEnded(AboutChat):
    """A streamed model call ended: `stop`, `tool_calls`, `length`, or `error` when it failed."""

    chat: ChatRef
    turn_id: str
    msg_id: str
    finish_reason: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta(AboutChat):
    """The model's reasoning text (reasoning_content, thinking blocks): for consoles and logs, not for chats."""

    chat: ChatRef
    turn_id: str
    msg_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCalled(AboutChat):
    """A tool call began; `summary` is a short, capped rendering of its arguments."""

    chat: ChatRef
    tool: str
    call_id: str
    turn_id: str = ""
    summary: str = ""


@dataclass(frozen=True, slots=True)
class ToolUpdated(AboutChat):
    """A running tool reported progress; `text` is what it reported (output so far, a step), capped."""

    chat: ChatRef
    tool: str
    call_id: str
    text: str
    turn_id: str = ""


@dataclass(frozen=True, slots=True)
class ToolFinished(AboutChat):
    """A tool call ended; `summary` is the start of its result."""

    chat: ChatRef
    tool: str
    call_id: str
    is_error: bool
    duration: float
    turn_id: str = ""
    summary: str = ""

    @property
    def ok(self) -> bool:
        return not self.is_error


@dataclass(frozen=True, slots=True)
class ErrorOccurred(AboutChat):
    """A turn failed: `where` is what failed (the model call, the turn), `error` the exception's type."""

    chat: ChatRef
    where: str
    error: str


@dataclass(frozen=True, slots=True)
class ReplyDropped(AboutChat):
    """A turn's reply was not sent: a `message_sending` hook blocked it; `turn_id` is the turn (the run) it ended."""

    chat: ChatRef
    turn_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class Delivered(AboutChat):
    chat: ChatRef
    message_id: str
    in_reply_to: str | None
    kind: str


@dataclass(frozen=True, slots=True)
class DeliveryFailed(AboutChat):
    chat: ChatRef
    message_id: str
    in_reply_to: str | None
    error: str


@dataclass(frozen=True, slots=True)
class MessageFailed(AboutChat):
    """An inbound message failed for good (its turn failed, or crashed the process twice): a dead letter now."""

    chat: ChatRef
    message_id: str
    reason: str


@dataclass(frozen=True, slots=True)
class CronRan(AboutChat):
    job_id: str
    chat: ChatRef
    ok: bool
    delivered: bool
    error: str | None


@dataclass(frozen=True, slots=True)
class CronSkipped:
    job_id: str
    late_seconds: float


@dataclass(frozen=True, slots=True)
class SubagentSpawned(AboutChat):
    """A sub-agent started working on a task for the session that spawned it."""

    chat: ChatRef
    subagent_id: str
    label: str


@dataclass(frozen=True, slots=True)
class SubagentCompleted(AboutChat):
    """A sub-agent ended: `status` is finished, timed out, failed or cancelled."""

    chat: ChatRef
    subagent_id: str
    label: str
    status: str


@dataclass(frozen=True, slots=True)
class HeartbeatTicked:
    """The heartbeat ran; `outcome` is what came of it (delivered, quiet, busy, off hours, nothing to do …)."""

    outcome: str


Event = (
    TurnStarted
    | TurnFinished
    | LLMCalled
    | StreamStarted
    | StreamDelta
    | StreamEnded
    | ReasoningDelta
    | ToolCalled
    | ToolUpdated
    | ToolFinished
    | ErrorOccurred
    | ReplyDropped
    | Delivered
    | DeliveryFailed
    | MessageFailed
    | CronRan
    | CronSkipped
    | SubagentSpawned
    | SubagentCompleted
    | HeartbeatTicked
)
Listener = Callable[[Event], None]


def event_to_json(event: Event) -> dict[str, Any]:
    """An event as plain JSON data: `{"type": "StreamDelta", ...fields}`, nested chats as objects."""
    return {"type": type(event).__name__, **asdict(event)}


class EventBus:
    """Synchronous fan-out of events; a failing listener is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[tuple[Listener, tuple[type, ...]]] = []
        self._routes: dict[type, tuple[Listener, ...]] = {}

    def subscribe(self, listener: Listener, *kinds: type) -> Callable[[], None]:
        """Add a listener for events of `kinds` (every event when none is named); the returned callable removes it."""
        entry = (listener, kinds)
        self._listeners.append(entry)
        self._routes.clear()

        def unsubscribe() -> None:
            if entry in self._listeners:
                self._listeners.remove(entry)
                self._routes.clear()

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Deliver an event to every listener that takes its kind, in subscription order."""
        kind = type(event)
        listeners = self._routes.get(kind)
        if listeners is None:
            listeners = self._routes[kind] = tuple(
                listener for listener, kinds in self._listeners if not kinds or issubclass(kind, kinds)
            )
        for listener in listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("event listener failed on %s", kind.__name__)
