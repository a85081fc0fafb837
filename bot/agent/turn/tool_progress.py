"""A running tool's progress as `ToolUpdated` events: cut to the summary size, at most a few a second."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from bot.agent.turn.stream import SUMMARY_CHARS
from bot.events import EventBus, ToolUpdated
from bot.llm.types import ToolCall
from bot.tools.base import ToolContext

UPDATE_INTERVAL = 0.25
"""Seconds between two updates of one call; what comes sooner goes out together once they have passed."""


class ToolProgress:
    """The `progress` callable of one tool call: joins what the tool reports and emits it as updates."""

    def __init__(
        self,
        events: EventBus,
        ctx: ToolContext,
        call: ToolCall,
        interval: float = UPDATE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._events = events
        self._ctx = ctx
        self._call = call
        self._interval = interval
        self._clock = clock
        self._held = ""
        self._last: float | None = None
        self._later: asyncio.TimerHandle | None = None

    def __call__(self, text: str) -> None:
        """Report `text`; it goes out now, or when the interval since the last update has passed."""
        self._held += text
        if self._later is not None or not self._held.strip():
            return
        wait = 0.0 if self._last is None else self._last + self._interval - self._clock()
        if wait > 0:
            self._later = asyncio.get_running_loop().call_later(wait, self._emit)
        else:
            self._emit()

    def close(self) -> None:
        """The call ended: what is still held is dropped (its end event carries the result)."""
        if self._later is not None:
            self._later.cancel()
            self._later = None

    def _emit(self) -> None:
        self._later = None
        self._last = self._clock()
        held, self._held = self._held, ""
        shown = held if len(held) <= SUMMARY_CHARS else "…" + held[-(SUMMARY_CHARS - 1) :]  # the newest part
        self._events.emit(ToolUpdated(self._ctx.chat, self._call.name, self._call.id, shown, self._ctx.turn_id))
