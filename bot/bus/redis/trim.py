"""Keeping the bus's streams bounded: entries older than the retention are trimmed, never an unfinished one."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from bot.bus.journal import RETENTION
from bot.bus.redis.scripts import TRIM

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

TRIM_EVERY = 60.0


class StreamTrimmer:
    """Trims (stream, group) pairs at most every `every` seconds; what a group has pending or unread stays."""

    def __init__(
        self,
        retention: float = RETENTION,
        every: float = TRIM_EVERY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._retention = retention
        self._every = every
        self._clock = clock
        self._next = 0.0

    async def maybe_trim(self, redis: Redis, streams: Sequence[tuple[str, str]]) -> int:
        """Trim when due; returns how many entries went."""
        now = self._clock()
        if now < self._next:
            return 0
        self._next = now + self._every
        cutoff = int((now - self._retention) * 1000)
        trimmed = 0
        for stream, group in streams:
            removed = int(await redis.eval(TRIM, 1, stream, group, cutoff))
            if removed:
                logger.debug("trimmed %d finished entries older than the retention from %s", removed, stream)
            trimmed += removed
        return trimmed
