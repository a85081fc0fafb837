"""Workers whose every connection to Redis closed: a crashed process, noticed long before its lease lapses.

A bus names each of its connections after its consumer (CLIENT SETNAME). When a worker's process dies, its
kernel closes its sockets and Redis drops them at once; a live worker always has its reader's connection open
(and reconnects within a fraction of a second when one breaks). So a name that was connected and has had no
connection for `GRACE` belongs to a dead worker, and its entries can be claimed without waiting out its lease.
A hung process or a lost network keeps its connections in Redis's view: for those the lease still decides.
A name last seen connected before the server restarted is left to its lease: after a restart nobody is connected
yet. A Redis that refuses CLIENT LIST (an ACL) leaves it all to the leases.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

GRACE = 0.2  # seconds between two looks that find no connection of a worker; a live one reconnects sooner
LOOK_EVERY = 0.1  # seconds between looks at the client list (one small reply), so a death is seen within 0.3 s


def client_name(consumer: str) -> str | None:
    """The name a bus's connections carry: its consumer's, when Redis accepts it as a client name."""
    return consumer if consumer and all("!" <= c <= "~" for c in consumer) else None


class Departures:
    """Watches which named clients are connected; reports each one that disconnected for good, once."""

    def __init__(self, grace: float = GRACE, clock: Callable[[], float] = time.monotonic) -> None:
        self._grace = grace
        self._clock = clock
        self._next_look = self._last_look = 0.0
        self._connected: set[str] = set()
        self._missing: dict[str, tuple[float, float]] = {}  # name -> (last look that saw it, first that did not)
        self._refused = False

    @property
    def connected(self) -> frozenset[str]:
        """The client names connected at the last look."""
        return frozenset(self._connected)

    async def gone(self, redis: Redis) -> list[str]:
        """Names connected at an earlier look that have had no connection for the grace since (each reported once).

        Called as often as one likes: it looks at most every LOOK_EVERY and answers [] in between.
        """
        from redis.exceptions import ResponseError

        if self._refused or self._clock() < self._next_look:
            return []
        self._next_look = self._clock() + LOOK_EVERY
        try:
            clients = await redis.client_list(_type="normal")
        except ResponseError as exc:  # no permission (an ACL): the leases alone tell the dead
            self._refused = True
            logger.info("redis bus: CLIENT LIST refused (%s); dead workers are noticed by their leases", exc)
            return []
        now, seen = self._clock(), self._last_look
        self._last_look = now
        connected = {name for client in clients if (name := client.get("name"))}
        for name in self._connected - connected:
            self._missing.setdefault(name, (seen, now))
        for name in connected:
            self._missing.pop(name, None)
        self._connected = connected
        due = {name: seen for name, (seen, missed) in self._missing.items() if now - missed >= self._grace}
        if not due:
            return []
        for name in due:
            del self._missing[name]
        # The server must have been up since the look that saw them (whole seconds, so one more): after a
        # restart nobody is connected yet, and the others' leases decide.
        uptime = float((await redis.info("server")).get("uptime_in_seconds", 0))
        return [name for name, seen in due.items() if uptime >= now - seen + 1]
