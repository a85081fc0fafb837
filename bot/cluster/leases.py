"""Leases in Redis: one holder at a time for a channel credential or the scheduler, renewed while it lives."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from bot.bus.redis.departures import LOOK_EVERY
from bot.bus.redis.scripts import RELEASE, RENEW
from bot.cancelling import cancel_and_wait
from bot.cluster.holders import HolderWatch

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

EXPIRY_MARGIN = 0.005  # seconds past the holder's expiry before trying again, so the key is surely gone on the server


def credential_key(secrets: list[str]) -> str:
    """A lease name for a bot credential that does not reveal it: a short hash of its secrets."""
    return hashlib.sha256("\0".join(secrets).encode()).hexdigest()[:24]


class Lease:
    """`SET key holder NX PX ttl`, renewed every third of the ttl, given up by compare-and-delete.

    `hold()` waits until the lease is ours; `lost` is set when a renewal finds it gone, or when no renewal
    got through for most of the ttl (Redis unreachable: the holder can no longer prove it holds the lease,
    so it must stop doing what the lease guards before a standby may take over). A standby retries when the
    holder's lease is due to expire (and at least every third of the ttl), so it takes over within one ttl
    of the holder dying, and never while the holder renews. With `departures`, a standby also watches the
    holder's connections (a holder is named as its connections are): once they all closed, its process is gone,
    and the standby deletes the lease (compare-and-delete) and takes it at once, without waiting out the ttl.
    """

    def __init__(
        self,
        redis: Redis,
        key: str,
        holder: str,
        ttl: float,
        watch: HolderWatch | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._redis = redis
        self._clock = clock
        self.key = key
        self.holder = holder
        self._watch = watch
        self._ttl_ms = max(int(ttl * 1000), 30)
        self.lost = asyncio.Event()
        self._held = False
        self._renewer: asyncio.Task[None] | None = None
        self._renew = redis.register_script(RENEW)
        self._release = redis.register_script(RELEASE)

    @property
    def interval(self) -> float:
        return self._ttl_ms / 3000

    async def try_acquire(self) -> bool:
        """Take the lease when nobody holds it (or we already do)."""
        if await self._redis.set(self.key, self.holder, nx=True, px=self._ttl_ms):
            return True
        return bool(await self._renew(keys=[self.key], args=[self.holder, self._ttl_ms]))

    async def hold(self, on_lost: Callable[[], Awaitable[None]] | None = None) -> None:
        """Wait until the lease is ours, then keep renewing it in the background until `release`."""
        from redis.exceptions import RedisError

        failures = 0
        while True:
            attempt = self._clock()
            try:
                if await self.try_acquire():
                    break
                pause = await self._until_expiry()
                if self._watch is not None:
                    pause = 0.0 if await self._holder_departed() else min(pause, LOOK_EVERY)
            except RedisError as exc:
                failures += 1
                (logger.error if failures == 1 else logger.info)(
                    "lease %s: redis unreachable (%s: %s); retrying", self.key, type(exc).__name__, exc
                )
                pause = self.interval
            await asyncio.sleep(pause)
        self._held = True
        self.lost.clear()
        logger.warning("holding lease %s", self.key)
        self._renewer = asyncio.create_task(self._keep(on_lost, attempt), name=f"lease:{self.key}")

    async def _holder_departed(self) -> bool:
        """Whether the holder's connections all closed; its lease is then deleted (unless it changed hands)."""
        assert self._watch is not None
        gone = await self._watch.departed(self._redis)
        holder = await self._redis.get(self.key) if gone else None
        if holder is None or holder not in gone:
            return False
        logger.warning("lease %s: its holder %s disconnected; taking over", self.key, holder)
        await self._release(keys=[self.key], args=[holder])
        return True

    async def _until_expiry(self) -> float:
        """Seconds until the other holder's lease expires unless renewed (at most a third of the ttl)."""
        remaining_ms = await self._redis.pttl(self.key)
        if remaining_ms == -2:  # expired between our attempt and now: try again at once
            return 0.0
        if remaining_ms < 0:  # set without an expiry: keep the usual pace
            return self.interval
        return min(remaining_ms / 1000 + EXPIRY_MARGIN, self.interval)

    async def _keep(self, on_lost: Callable[[], Awaitable[None]] | None, renewed_at: float) -> None:
        """Renew every third of the ttl (counted from the last renewal's send time, not from when this task got to
        run); lost once a renewal fails or none got through in 2/3 of the ttl.

        A loop that stalled past that point before it could ask (imports on a loaded machine block it for seconds)
        asks once, for half a third of the ttl: a renewal that gets through proves the lease stayed ours (it is
        compare-and-set), so no standby can have taken it meanwhile.
        """
        from redis.exceptions import RedisError

        deadline = self._ttl_ms / 1000 * 2 / 3  # measured from a renewal's send time, so a slow reply is on our side
        due = renewed_at + self.interval
        asked = False  # since the last renewal
        while True:
            await asyncio.sleep(max(due - self._clock(), 0.0))
            attempt = self._clock()
            left = renewed_at + deadline - attempt
            if left <= 0 and not asked:  # the loop stalled past the deadline: nothing was asked yet
                left = self.interval / 2
            asked = True
            try:
                async with asyncio.timeout(max(left, 0.001)):
                    renewed = bool(await self._renew(keys=[self.key], args=[self.holder, self._ttl_ms]))
            except (RedisError, TimeoutError) as exc:
                if self._clock() - renewed_at < deadline:
                    logger.warning("lease %s: a renewal failed (%s); retrying", self.key, type(exc).__name__)
                    due = self._clock() + self.interval / 5
                    continue
                logger.error("lease %s: no renewal got through in time (%s)", self.key, type(exc).__name__)
                renewed = False
            if renewed:
                renewed_at, asked, due = attempt, False, attempt + self.interval
                continue
            logger.error("lost lease %s", self.key)
            self._held = False
            self.lost.set()
            if on_lost is not None:
                await on_lost()
            return

    async def release(self) -> None:
        """Stop renewing and give the lease up if it is still ours (best effort: unreachable, it expires)."""
        from redis.exceptions import RedisError

        await cancel_and_wait(self._renewer)
        self._renewer = None
        if self._held:
            self._held = False
            try:
                await self._release(keys=[self.key], args=[self.holder])
            except RedisError as exc:
                logger.warning("lease %s: not released (%s); it expires in its ttl", self.key, exc)
