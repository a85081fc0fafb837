"""A channel's hold on its platform: when it last heard from it (a poll that answered, or an event that arrived),
and its one connection kept up, reconnected with backoff whenever it drops."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from bot.errors import ChannelError
from bot.retry import RetryPolicy

logger = logging.getLogger(__name__)

MOST_FAILURES = 10  # the backoff stops growing after this many failures in a row


class Liveness:
    """The time of the last successful poll or event; `timeout` is how long one long poll may take."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._last = clock()

    def beat(self) -> None:
        """Note a successful poll or an event from the platform."""
        self._last = self._clock()

    def age(self) -> float:
        """Seconds since the last beat (or since this was made)."""
        return self._clock() - self._last


async def keep_connected(
    lost: asyncio.Event, connect: Callable[[], Awaitable[None]], retry: RetryPolicy, where: str
) -> None:
    """Each time `lost` is set, wait the policy's delay (longer with every failure in a row) and `connect` again;
    a failed connect sets `lost` once more. Runs until cancelled."""
    failures = 0
    while True:
        await lost.wait()
        lost.clear()
        failures += 1
        delay = retry.delay(min(failures, MOST_FAILURES))
        logger.warning("%s: connection lost; reconnecting in %.1fs", where, delay)
        await retry.sleep(delay)
        try:
            await connect()
            failures = 0
        except ChannelError as exc:
            logger.warning("%s: reconnect failed: %s", where, exc)
            lost.set()
