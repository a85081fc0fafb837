"""A timeout on silence: `asyncio.timeout` that expires `seconds` after the last `touch()`, not after the start."""

from __future__ import annotations

import asyncio
from types import TracebackType


class IdleTimeout:
    """Raises TimeoutError in the block once `seconds` pass without a `touch()` (the start counts as one).

    A touch only reads the clock: its timer is moved when it fires early, not on every touch (a stream
    touches it for every token, and moving asyncio's timer each time costs a cancelled timer handle).
    """

    def __init__(self, seconds: float) -> None:
        self._seconds = seconds
        self._loop = asyncio.get_running_loop()
        self._timeout = asyncio.timeout(None)
        self._last = 0.0
        self._watch: asyncio.TimerHandle | None = None

    def touch(self) -> None:
        """Something arrived: the silence starts again now."""
        self._last = self._loop.time()

    async def __aenter__(self) -> IdleTimeout:
        await self._timeout.__aenter__()
        self.touch()
        self._watch = self._loop.call_at(self._last + self._seconds, self._check)
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._watch is not None:
            self._watch.cancel()
        await self._timeout.__aexit__(kind, error, trace)

    def _check(self) -> None:
        due = self._last + self._seconds
        if self._loop.time() >= due:
            self._watch = None
            self._timeout.reschedule(due)  # in the past: asyncio expires it at once, as it would have
        else:
            self._watch = self._loop.call_at(due, self._check)
