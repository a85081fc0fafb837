"""The redis bus's reader tasks: each runs its rounds until stop; an outage is logged and retried with backoff."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.cancelling import cancel_and_wait

logger = logging.getLogger(__name__)

OUTAGE_BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)

ReadRound = Callable[[bool], Awaitable[None]]
"""One round of a reader; its argument says whether to reread what this reader already holds (after a failure)."""


class Readers:
    """The inbound and outbound readers, started once each and supervised through an outage, never a silent end."""

    def __init__(self, recreate_groups: Callable[[], Awaitable[None]]) -> None:
        """`recreate_groups` makes the consumer groups again after the server lost its data."""
        self._recreate_groups = recreate_groups
        self._closing = False
        self._begun: set[str] = set()
        self._reading: set[str] = set()  # readers past their first round
        self._tasks: list[asyncio.Task[None]] = []

    def begin(self, what: str) -> bool:
        """True the first time reader `what` is asked for (the caller then `run`s it); False once it was."""
        if what in self._begun:
            return False
        self._begun.add(what)
        return True

    def run(self, what: str, read_round: ReadRound) -> None:
        """Run reader `what`'s rounds in a task until `stop`."""
        self._tasks.append(asyncio.create_task(self._rounds(what, read_round), name=f"redis-bus:{what}"))

    async def stop(self) -> None:
        """End every reader (even one whose cancel a redis call swallowed) and forget them, for a later start."""
        self._closing = True  # the readers end at their next round even if a cancel is swallowed
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()
        self._begun.clear()
        self._reading.clear()
        self._closing = False

    async def _rounds(self, what: str, read_round: ReadRound) -> None:
        from redis.exceptions import RedisError

        failures = 0
        while not self._closing:
            try:
                await read_round(failures > 0 or what not in self._reading)
            except RedisError as exc:
                delay = OUTAGE_BACKOFF[min(failures, len(OUTAGE_BACKOFF) - 1)]
                failures += 1
                log = logger.error if failures == 1 else logger.info
                log(
                    "redis bus: the %s reader failed (%s: %s); retry %d in %.1fs",
                    what,
                    type(exc).__name__,
                    exc,
                    failures,
                    delay,
                )
                if "NOGROUP" in str(exc):
                    await self._recreate_groups()  # the server lost its data: start over with empty streams
                await asyncio.sleep(delay)
                continue
            self._reading.add(what)
            if failures:
                logger.warning("redis bus: the %s reader is back after %d failed attempts", what, failures)
                failures = 0
