"""A channel's send slots: at most so many sends in flight, and a retry takes the next free slot first."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SendSlots:
    """Up to `size` holders at once; waiting retries are served before waiting first attempts.

    A retry already waited its turn once, and its chat's later replies wait behind it: queued again behind
    every other chat's first attempts, each failure would cost its chat a second pass through the queue.
    """

    def __init__(self, size: int) -> None:
        self._free = size
        self._retries: deque[asyncio.Future[None]] = deque()
        self._firsts: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        """How many sends wait for a slot."""
        return sum(not waiter.done() for queue in (self._retries, self._firsts) for waiter in queue)

    @asynccontextmanager
    async def slot(self, retry: bool = False) -> AsyncIterator[None]:
        """Hold a slot for the block; `retry` for a message whose earlier attempt failed."""
        await self._acquire(self._retries if retry else self._firsts)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, queue: deque[asyncio.Future[None]]) -> None:
        if self._free > 0:  # a free slot means nobody waits: a release hands its slot to a waiter first
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        queue.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot came as it was cancelled: pass it on
            elif waiter in queue:
                queue.remove(waiter)
            raise

    def _release(self) -> None:
        for queue in (self._retries, self._firsts):
            while queue:
                waiter = queue.popleft()
                if not waiter.done():
                    waiter.set_result(None)
                    return
        self._free += 1
