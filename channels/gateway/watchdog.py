"""Noticing a wedged poller: a connected channel that heard nothing for three long-poll timeouts is restarted."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping

from channels.liveness import Liveness

logger = logging.getLogger(__name__)

WEDGED_AFTER = 3  # long-poll timeouts without a successful poll
READY_WITHIN = 2  # long-poll timeouts a ready channel's last poll may be old


def is_wedged(liveness: Liveness) -> bool:
    """Whether no poll succeeded for WEDGED_AFTER long-poll timeouts."""
    return liveness.age() > WEDGED_AFTER * liveness.timeout


def is_fresh(liveness: Liveness) -> bool:
    """Whether the last successful poll or event is younger than READY_WITHIN long-poll timeouts."""
    return liveness.age() < READY_WITHIN * liveness.timeout


class Watchdog:
    """Checks the connected channels' liveness every half timeout; restarts a wedged one with one WARNING."""

    def __init__(
        self,
        connected: Callable[[], Mapping[str, Liveness]],
        restart: Callable[[str], Awaitable[None]],
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._connected = connected
        self._restart = restart
        self._sleep = sleep

    async def check(self) -> list[str]:
        """Restart every wedged channel now; return their names."""
        wedged = [name for name, liveness in self._connected().items() if is_wedged(liveness)]
        for name in wedged:
            liveness = self._connected().get(name)
            age = liveness.age() if liveness else 0.0
            logger.warning("%s: no successful poll for %.0fs (wedged); restarting the channel", name, age)
            await self._restart(name)
        return wedged

    async def run(self) -> None:
        """Check until cancelled."""
        while True:
            timeouts = [liveness.timeout for liveness in self._connected().values()]
            await self._sleep(min(timeouts, default=10.0) / 2)
            await self.check()
