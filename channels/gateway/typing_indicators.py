"""Typing indicators: shown once a turn outlasts a short delay, refreshed until its reply goes out."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from bot.cancelling import cancel_and_wait

logger = logging.getLogger(__name__)

TYPING_REFRESH = 4.0
TYPING_DELAY = 0.2  # a reply quicker than this needs no indicator: one platform call fewer per message

ShowTyping = Callable[[], Awaitable[None]]


class TypingIndicators:
    """One indicator per session: a timer until the delay, then a task refreshing it; a quick turn costs no task."""

    def __init__(self, delay: float = TYPING_DELAY, refresh: float = TYPING_REFRESH) -> None:
        """`delay`: how long a turn runs before typing shows; `refresh`: how often it is shown again."""
        self._delay = delay
        self._refresh_every = refresh
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._tasks: dict[str, tuple[asyncio.Task[None], asyncio.Event]] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    def __contains__(self, key: str) -> bool:
        return key in self._timers or key in self._tasks

    def start(self, key: str, show: ShowTyping) -> None:
        """Show typing in session `key` once the delay has passed, unless it already shows."""
        if key not in self:
            self._timers[key] = asyncio.get_running_loop().call_later(self._delay, self._begin, key, show)

    def stop(self, key: str) -> None:
        """The session's turn ended or its reply went out: no more typing there."""
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        if (running := self._tasks.pop(key, None)) is not None:
            task, stop = running  # a call in flight finishes: the platform's bookkeeping of it must not be cut
            stop.set()
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)

    async def stop_all(self) -> None:
        """Stop every indicator and end their tasks (shutdown: a call in flight is cancelled)."""
        for key in [*self._timers, *self._tasks]:
            self.stop(key)
        await cancel_and_wait(*self._stopping)

    def _begin(self, key: str, show: ShowTyping) -> None:
        del self._timers[key]
        stop = asyncio.Event()
        self._tasks[key] = (asyncio.create_task(self._refresh(key, show, stop), name=f"typing:{key}"), stop)

    async def _refresh(self, key: str, show: ShowTyping, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await show()
            except Exception as exc:
                logger.debug("[%s] typing indicator failed: %s", key, exc)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._refresh_every):
                    await stop.wait()
