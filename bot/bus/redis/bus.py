"""The shared bus: inbox and outbox as Redis Streams with consumer groups, for a gateway and many workers.

The inbox (inbox.py) carries messages to the workers, one session's turns in order across them; each
channel's outbox (outbox.py) carries replies to the gateway holding that channel. Replies have ids
derived from the inbound id, so a reply written twice is journaled once. This facade keeps both
contracts on one object, owns the readers and supervises them through an outage.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from bot.bus.contract import BusStats
from bot.bus.messages import InboundMessage, OutboundMessage
from bot.bus.redis.backlog import StreamBacklog, stream_backlog
from bot.bus.redis.connection import TIMEOUT, StreamScope, default_consumer
from bot.bus.redis.inbox import DEAD_CHECKS_PER_LEASE, WORKERS, RedisInbox
from bot.bus.redis.outbox import ChannelOutboxes
from bot.cancelling import cancel_and_wait
from bot.errors import BusClosed

if TYPE_CHECKING:
    from redis.asyncio import Redis

logger = logging.getLogger(__name__)

MAX_BLOCK_MS = 1000  # a reader wakes at least this often to renew and claim, and to notice a stop
OUTAGE_BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)


class RedisBus:
    """The MessageBus contract on Redis; every process of one bot uses the same `prefix`."""

    def __init__(
        self,
        url: str,
        prefix: str = "relaybot",
        consumer: str | None = None,
        lease: float = 3.0,
        claim_idle: float = 30.0,
        block: float = 0.05,
        timeout: float = TIMEOUT,
    ) -> None:
        self._scope = StreamScope(url, prefix, consumer or default_consumer(), timeout)
        lease_ms = int(lease * 1000)
        claim_idle_ms = int(claim_idle * 1000)
        block_ms = min(max(int(block * 1000), 1), MAX_BLOCK_MS)
        idle_block_ms = max(min(block_ms * 5, lease_ms // DEAD_CHECKS_PER_LEASE, MAX_BLOCK_MS, int(timeout * 500)), 1)
        self._inbox = RedisInbox(self._scope, lease_ms, claim_idle_ms, block_ms, idle_block_ms, self.publish_outbound)
        self._outboxes = ChannelOutboxes(self._scope, claim_idle_ms, idle_block_ms, block_ms)
        self._closing = False
        self._intake_closed = False
        self._tasks: list[asyncio.Task[None]] = []
        self._reading_inbound = False
        self._reading_outbound = False
        self._reading: set[str] = set()  # readers past their first round

    @property
    def consumer(self) -> str:
        """This process's name in the streams' groups and on the leases it holds."""
        return self._scope.consumer

    def key(self, *parts: str) -> str:
        """A key under this bot's prefix."""
        return self._scope.key(*parts)

    @property
    def redis(self) -> Redis:
        """The redis.asyncio client (for leases and status)."""
        return self._scope.redis

    async def start(self) -> None:
        if self._scope.is_open:
            return
        self._closing = False
        self._scope.open()
        self._inbox.open()
        self._outboxes.open()
        await self._create_groups()

    async def _create_groups(self) -> None:
        await self._inbox.create_group()
        await self._outboxes.create_groups()

    def deliver_for(self, channels: Sequence[str]) -> None:
        """Deliver the replies of these channels only (the ones whose receiver lease this gateway holds).

        Without it, `consume_outbound` delivers every channel's replies, for one process serving them all.
        """
        self._outboxes.deliver_for(channels)

    async def stop(self) -> None:
        self._closing = True  # the readers end at their next round even if a cancel is swallowed
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()
        self._reading_inbound = self._reading_outbound = False
        self._reading.clear()
        await self._inbox.close()
        await self._scope.close()

    def close_intake(self) -> None:
        self._intake_closed = True

    async def publish_inbound(self, message: InboundMessage) -> bool:
        if self._intake_closed:
            raise BusClosed("the bot is stopping; the message was not accepted")
        await self.start()
        return await self._inbox.publish(message)

    async def consume_inbound(self) -> InboundMessage:
        if not self._reading_inbound:
            self._reading_inbound = True
            await self.start()
            reader = self._supervised("inbound", self._inbox.read_round)
            self._tasks.append(asyncio.create_task(reader, name="redis-bus:inbound"))
        return await self._inbox.queue.get()

    async def begin_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.begin(message_ids)

    async def complete_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.complete(message_ids)

    async def release_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.release(message_ids)

    async def publish_outbound(self, message: OutboundMessage, completes: Sequence[str] = ()) -> bool:
        await self.start()
        completion = self._inbox.completion(completes)
        fresh = await self._outboxes.publish(message, completion)
        await self._inbox.forget(completion.message_ids, completion.locks)
        return fresh

    async def consume_outbound(self) -> OutboundMessage:
        if not self._reading_outbound:
            self._reading_outbound = True
            await self.start()
            reader = self._supervised("outbound", self._outboxes.read_round)
            self._tasks.append(asyncio.create_task(reader, name="redis-bus:outbound"))
        return await self._outboxes.queue.get()

    async def chunks_sent(self, message_id: str) -> int:
        return await self._outboxes.chunks_sent(message_id)

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        await self._outboxes.mark_chunk_sent(message_id, index)

    async def mark_sent(self, message_id: str) -> None:
        await self._outboxes.finish(message_id, "sent")

    async def mark_failed(self, message_id: str, error: str) -> None:
        await self._outboxes.finish(message_id, "failed", error)

    async def count_ambiguous(self, message_id: str) -> None:
        await self._outboxes.count_ambiguous()

    async def backlog(self) -> list[StreamBacklog]:
        """Per stream: the inbox for the workers, then each channel's outbox for its gateway."""
        await self.start()
        inbox = await stream_backlog(self.redis, self._inbox.stream, WORKERS)
        return [inbox, *await self._outboxes.backlog()]

    async def stats(self) -> BusStats:
        inbox, *outboxes = await self.backlog()
        counters = await self.redis.mget(
            [self.key("stats", name) for name in ("inbound_failed", "outbound_failed", "ambiguous")]
        )
        failed_in, failed_out, ambiguous = (int(value or 0) for value in counters)
        return BusStats(
            inbound_pending=inbox.pending + inbox.unread,
            inbound_failed=failed_in,
            outbound_pending=sum(outbox.pending + outbox.unread for outbox in outboxes),
            outbound_failed=failed_out,
            ambiguous_sends=ambiguous,
        )

    async def _supervised(self, what: str, read_round: Callable[[bool], Awaitable[None]]) -> None:
        """Run a reader's rounds until stop; an outage is logged and retried with backoff, never a silent end."""
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
                    await self._create_groups()  # the server lost its data: start over with empty streams
                await asyncio.sleep(delay)
                continue
            self._reading.add(what)
            if failures:
                logger.warning("redis bus: the %s reader is back after %d failed attempts", what, failures)
                failures = 0
