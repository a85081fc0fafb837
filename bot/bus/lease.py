"""Leases in Redis: one holder at a time for a channel credential or the scheduler, renewed while it lives."""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from bot.bus.redis_scripts import RELEASE, RENEW

logger = logging.getLogger(__name__)


def credential_key(secrets: list[str]) -> str:
    """A lease name for a bot credential that does not reveal it: a short hash of its secrets."""
    return hashlib.sha256("\0".join(secrets).encode()).hexdigest()[:24]


class Lease:
    """`SET key holder NX PX ttl`, renewed every third of the ttl, given up by compare-and-delete.

    `hold()` waits until the lease is ours; `lost` is set when a renewal finds it gone (the holder must
    then stop doing what the lease guards). A standby retries every third of the ttl, so it takes over
    at most 4/3 of the ttl after the holder died, and never while the holder renews.
    """

    def __init__(self, redis: Any, key: str, holder: str, ttl: float) -> None:
        self._redis = redis
        self.key = key
        self.holder = holder
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
        while not await self.try_acquire():
            await asyncio.sleep(self.interval)
        self._held = True
        self.lost.clear()
        logger.warning("holding lease %s", self.key)
        self._renewer = asyncio.create_task(self._keep(on_lost), name=f"lease:{self.key}")

    async def _keep(self, on_lost: Callable[[], Awaitable[None]] | None) -> None:
        while True:
            await asyncio.sleep(self.interval)
            if not await self._renew(keys=[self.key], args=[self.holder, self._ttl_ms]):
                logger.error("lost lease %s", self.key)
                self._held = False
                self.lost.set()
                if on_lost is not None:
                    await on_lost()
                return

    async def release(self) -> None:
        """Stop renewing and give the lease up if it is still ours."""
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
            self._renewer = None
        if self._held:
            await self._release(keys=[self.key], args=[self.holder])
            self._held = False
