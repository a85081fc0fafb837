"""One watch of the cluster's connections for every lease a process stands by for, begun when it first waits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.bus.redis.departures import Departures

if TYPE_CHECKING:
    from redis.asyncio import Redis


class HolderWatch:
    """Holders whose connections all closed, remembered for each lease that waits later.

    A watch sees a death only if it saw the holder connected before: a standby that took one lease when the
    holder died must still know it is dead when it comes to wait for the next (its scheduler lease after its
    channels'), or it would wait out that lease's whole ttl. Process names are unique (host, pid, a random
    tail), so a name that left stays dead; one seen connected again (a blip longer than the grace) is alive.
    """

    def __init__(self, departures: Departures | None = None) -> None:
        self._departures = departures or Departures()
        self._departed: set[str] = set()

    @property
    def connected(self) -> frozenset[str]:
        """The client names connected at the last look."""
        return self._departures.connected

    async def departed(self, redis: Redis) -> frozenset[str]:
        """Every name this watch saw connected and then gone for good (it looks at most every LOOK_EVERY)."""
        self._departed.update(await self._departures.gone(redis))
        self._departed -= self._departures.connected
        return frozenset(self._departed)
