"""Typed events about what the bot is doing, for logs, the CLI and UIs."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TurnStarted:
    session_key: str
    turn_id: str


@dataclass(frozen=True, slots=True)
class TurnFinished:
    """A turn ended; `replied` is False when no final reply follows (stopped, or answered through `message`)."""

    session_key: str
    turn_id: str
    outcome: str
    iterations: int
    duration: float
    replied: bool = True


@dataclass(frozen=True, slots=True)
class LLMCalled:
    session_key: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    duration: float


@dataclass(frozen=True, slots=True)
class StreamDelta:
    session_key: str
    turn_id: str
    text: str


@dataclass(frozen=True, slots=True)
class ToolCalled:
    session_key: str
    tool: str
    call_id: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    session_key: str
    tool: str
    call_id: str
    is_error: bool
    duration: float


@dataclass(frozen=True, slots=True)
class ErrorOccurred:
    session_key: str
    where: str
    error: str


Event = TurnStarted | TurnFinished | LLMCalled | StreamDelta | ToolCalled | ToolFinished | ErrorOccurred
Listener = Callable[[Event], None]


class EventBus:
    """Synchronous fan-out of events; a failing listener is logged, never fatal."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; the returned callable removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: Event) -> None:
        """Deliver an event to every listener, in subscription order."""
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:
                logger.exception("event listener failed on %s", type(event).__name__)
