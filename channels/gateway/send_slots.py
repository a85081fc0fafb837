"""A channel's send slots: at most so many sends in flight, and the oldest waiting reply takes the next free slot."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class SendSlots:
    """Up to `size` holders at once; waiters are served by the age of what they send, oldest first.

    A chat sends its replies one at a time, so a chat that fell behind (a 429's retry_after, a retried 5xx) asks
    for a slot no more often than the chats ahead of it: served in the order of asking, it would stay behind until
    the others ran dry. Served by age, its older replies go before their newer ones and it catches up; a retry is
    older than the first attempts queued after it.
    """

    def __init__(self, size: int) -> None:
        self._free = size
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []  # a heap: (queued at, order of asking)
        self._asked = itertools.count()

    @property
    def waiting(self) -> int:
        """How many sends wait for a slot."""
        return sum(not waiter.done() for _, _, waiter in self._waiters)

    @asynccontextmanager
    async def slot(self, queued_at: float = 0.0) -> AsyncIterator[None]:
        """Hold a slot for the block; `queued_at`: when the message to send was queued (older goes first)."""
        await self._acquire(queued_at)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, queued_at: float) -> None:
        if self._free > 0:  # a free slot means nobody waits: a release hands its slot to a waiter first
            self._free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._waiters, (queued_at, next(self._asked), waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # the slot came as it was cancelled: pass it on
            raise  # a cancelled waiter stays in the heap, done: the next release skips it

    def _release(self) -> None:
        while self._waiters:
            _, _, waiter = heapq.heappop(self._waiters)
            if not waiter.done():
                waiter.set_result(None)
                return
        self._free += 1
