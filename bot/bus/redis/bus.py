"""The shared bus: inbox and outbox as Redis Streams with consumer groups, for a gateway and many workers.

The inbox (inbox.py) carries messages to the workers, one session's turns in order across them; each
channel's outbox (outbox.py) carries replies to the gateway holding that channel. Replies have ids
derived from the inbound id, so a reply written twice is journaled once. This facade keeps both
contracts on one object and owns the readers (readers.py supervises them through an outage).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from bot.bus.contract import BusStats
from bot.bus.messages import InboundMessage, OutboundMessage
from bot.bus.redis.backlog import StreamBacklog, stream_backlog
from bot.bus.redis.connection import TIMEOUT, StreamScope, default_consumer
from bot.bus.redis.dead_letters import RedisDeadLetters
from bot.bus.redis.inbox import DEAD_CHECKS_PER_LEASE, WORKERS, RedisInbox
from bot.bus.redis.outbox import ChannelOutboxes
from bot.bus.redis.readers import Readers
from bot.errors import BusClosed

if TYPE_CHECKING:
    from redis.asyncio import Redis

MAX_BLOCK_MS = 1000  # a reader wakes at least this often to renew and claim, and to notice a stop


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
        self._dead = RedisDeadLetters(self._scope)
        self._inbox = RedisInbox(self._scope, lease_ms, claim_idle_ms, block_ms, idle_block_ms, self.fail_inbound)
        self._outboxes = ChannelOutboxes(self._scope, claim_idle_ms, idle_block_ms, block_ms)
        self._intake_closed = False
        self._readers = Readers(partial(create_groups, self._inbox, self._outboxes))

    @property
    def consumer(self) -> str:
        """This process's name in the streams' groups and on the leases it holds."""
        return self._scope.consumer

    @property
    def key(self) -> Callable[..., str]:
        """Makes a key under this bot's prefix from its parts."""
        return self._scope.key

    @property
    def redis(self) -> Redis:
        """The redis.asyncio client (for leases and status)."""
        return self._scope.redis

    async def start(self) -> None:
        if self._scope.is_open:
            return
        self._scope.open()
        self._inbox.open()
        self._outboxes.open()
        await create_groups(self._inbox, self._outboxes)

    def deliver_for(self, channels: Sequence[str]) -> None:
        """Deliver the replies of these channels only (the ones whose receiver lease this gateway holds).

        Without it, `consume_outbound` delivers every channel's replies, for one process serving them all.
        """
        self._outboxes.deliver_for(channels)

    async def stop(self) -> None:
        await self._readers.stop()
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
        if self._readers.begin("inbound"):
            await self.start()
            self._readers.run("inbound", self._inbox.read_round)
        return await self._inbox.queue.get()

    async def begin_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.begin(message_ids)

    async def complete_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.complete(message_ids)

    async def release_inbound(self, message_ids: Sequence[str]) -> None:
        await self._inbox.release(message_ids)

    async def fail_inbound(
        self, messages: Sequence[InboundMessage], reason: str, apology: OutboundMessage | None = None
    ) -> None:
        # Recorded before the entries are acknowledged: a crash in between runs the message again, never loses it.
        for message in messages:
            starts = int(await self.redis.get(self.key("starts", message.id)) or 0)
            await self._dead.record_inbound(message, reason, max(starts, 1))
        if apology is not None:
            await self.publish_outbound(apology, [m.id for m in messages])
        else:
            await self._inbox.complete([m.id for m in messages])

    async def publish_outbound(self, message: OutboundMessage, completes: Sequence[str] = ()) -> bool:
        await self.start()
        completion = self._inbox.completion(completes)
        fresh = await self._outboxes.publish(message, completion)
        await self._inbox.forget(completion.message_ids, completion.locks)
        return fresh

    async def consume_outbound(self) -> OutboundMessage:
        if self._readers.begin("outbound"):
            await self.start()
            self._readers.run("outbound", self._outboxes.read_round)
        return await self._outboxes.queue.get()

    async def chunks_sent(self, message_id: str) -> int:
        return await self._outboxes.chunks_sent(message_id)

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        await self._outboxes.mark_chunk_sent(message_id, index)

    async def mark_sent(self, message_id: str) -> None:
        await self._outboxes.finish(message_id, "sent")

    async def mark_failed(self, message_id: str, error: str) -> None:
        body = await self._outboxes.finish(message_id, "failed", error)
        if body is not None:
            rounds = int(await self.redis.hget(self.key("out", message_id), "rounds") or 0)
            await self._dead.record("out", body, message_id, error, max(rounds, 1))

    @property
    def dead_letters(self) -> RedisDeadLetters:
        return self._dead

    async def count_ambiguous(self, message_id: str) -> None:
        await self._outboxes.count_ambiguous()

    async def backlog(self) -> list[StreamBacklog]:
        """Per stream: the inbox for the workers, then each channel's outbox for its gateway."""
        await self.start()
        inbox = await stream_backlog(self.redis, self._inbox.stream, WORKERS)
        return [inbox, *await self._outboxes.backlog()]

    async def stats(self) -> BusStats:
        inbox, *outboxes = await self.backlog()
        ambiguous = int(await self.redis.get(self.key("stats", "ambiguous")) or 0)
        failed_in, failed_out, oldest = await self._dead.counts()
        return BusStats(
            inbound_pending=inbox.pending + inbox.unread,
            inbound_failed=failed_in,
            outbound_pending=sum(outbox.pending + outbox.unread for outbox in outboxes),
            outbound_failed=failed_out,
            ambiguous_sends=ambiguous,
            oldest_dead=oldest,
        )


async def create_groups(inbox: RedisInbox, outboxes: ChannelOutboxes) -> None:
    """Make sure every stream has its consumer group (idempotent; again after the server lost its data)."""
    await inbox.create_group()
    await outboxes.create_groups()
