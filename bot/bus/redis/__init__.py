"""The shared bus: inbox and outbox as Redis Streams with consumer groups, for a gateway and many workers.

Inbound entries go to the `workers` group. A worker runs an entry only once it is admitted (a Lua
script): no other worker holds the session's lock, and every earlier pending entry of the session
was admitted by this worker, so one session's turns run one at a time, in arrival order, across
workers. A worker renews its locks and the idle time of its entries; when it dies, its entries go
idle and another worker claims them (XAUTOCLAIM) and runs them again. An entry of a session whose
turn runs on another worker is handed to that worker (redis_handoff.py), so /stop, /approve and
steering reach the running turn. Replies have ids derived from the inbound id, so a reply written
twice is journaled once.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bot.bus.contract import BusStats
from bot.bus.journal import CRASH_LIMIT, RETENTION, dedupe_key
from bot.bus.local import CRASH_APOLOGY
from bot.bus.messages import (
    InboundMessage,
    OutboundMessage,
    inbound_to_json,
    outbound_to_json,
)
from bot.bus.redis.handoff import HandoffStream, ReadEntry, read_entries
from bot.bus.redis.outbox import ChannelOutboxes, StreamBacklog, stream_backlog
from bot.bus.redis.scripts import ADMIT, PUBLISH_INBOUND, PUBLISH_OUTBOUND, RELEASE, RENEW
from bot.bus.redis.trim import StreamTrimmer
from bot.cancelling import cancel_and_wait
from bot.errors import BusClosed

logger = logging.getLogger(__name__)

WORKERS = "workers"
BATCH = 100
MAX_BLOCK_MS = 1000  # a reader wakes at least this often to renew and claim, and to notice a stop
TIMEOUT = 5.0  # every command's socket wait; longer than any BLOCK, so a blocked read never times out
OUTAGE_BACKOFF = (0.1, 0.5, 1.0, 2.0, 5.0)


def connect(url: str, timeout: float = TIMEOUT) -> Any:
    """A redis.asyncio client whose every wait is bounded and whose transient failures are retried twice."""
    import redis.asyncio as aioredis
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialBackoff
    from redis.exceptions import ConnectionError, TimeoutError

    return aioredis.from_url(
        url,
        decode_responses=True,
        socket_timeout=timeout,
        socket_connect_timeout=timeout,
        health_check_interval=30,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.1), 2),
        retry_on_error=[ConnectionError, TimeoutError],
    )


def default_consumer() -> str:
    """A name unique to this bus: host, pid and a random suffix (a process may hold several in tests)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


def _entry_order(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq)


class RedisBus:
    """The MessageBus contract on Redis; every process of one bot uses the same `prefix`."""

    def __init__(
        self,
        url: str,
        prefix: str = "relaybot",
        consumer: str | None = None,
        lease: float = 10.0,
        claim_idle: float = 30.0,
        block: float = 0.05,
        timeout: float = TIMEOUT,
    ) -> None:
        self._url = url
        self._p = prefix
        self.consumer = consumer or default_consumer()
        self._lease_ms = int(lease * 1000)
        self._claim_idle_ms = int(claim_idle * 1000)
        self._block_ms = min(max(int(block * 1000), 1), MAX_BLOCK_MS)
        self._idle_block_ms = max(min(self._block_ms * 5, self._lease_ms // 3, MAX_BLOCK_MS, int(timeout * 500)), 1)
        self._timeout = timeout
        self._redis: Any = None
        self._closing = False
        self._intake_closed = False
        self._inbound: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._held: dict[str, InboundMessage] = {}
        self._claimed: set[str] = set()
        self._entries: dict[str, tuple[str, str]] = {}  # message id -> (entry id, session key)
        self._inflight: dict[str, set[str]] = {}  # session key -> admitted entry ids
        self._outboxes = ChannelOutboxes(self, self._claim_idle_ms, self._idle_block_ms, self._block_ms)
        self._tasks: list[asyncio.Task[None]] = []
        self._reading_inbound = False
        self._reading_outbound = False
        self._reading: set[str] = set()  # readers past their first round
        self._next_claim = self._next_renew = 0.0
        self._handoff: HandoffStream | None = None
        self._trimmer = StreamTrimmer()

    def key(self, *parts: str) -> str:
        """A key under this bot's prefix."""
        return ":".join((self._p, *parts))

    @property
    def redis(self) -> Any:
        """The redis.asyncio client (for leases and status)."""
        assert self._redis is not None, "the redis bus is not started"
        return self._redis

    async def start(self) -> None:
        if self._redis is not None:
            return
        self._closing = False
        self._redis = connect(self._url, self._timeout)
        self._scripts = {
            name: self._redis.register_script(source)
            for name, source in (
                ("inbound", PUBLISH_INBOUND),
                ("admit", ADMIT),
                ("outbound", PUBLISH_OUTBOUND),
                ("renew", RENEW),
                ("release", RELEASE),
            )
        }
        await self._create_groups()

    async def _create_groups(self) -> None:
        from redis.exceptions import ResponseError

        try:
            await self.redis.xgroup_create(self.key("inbox"), WORKERS, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
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
        if self._handoff is not None:
            await self._close_handoff(self._handoff)
            self._handoff = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    def close_intake(self) -> None:
        self._intake_closed = True

    async def publish_inbound(self, message: InboundMessage) -> bool:
        if self._intake_closed:
            raise BusClosed("the bot is stopping; the message was not accepted")
        await self.start()
        session = message.chat.session_key
        dedupe = dedupe_key(message)
        keys = [
            self.key("in", message.id),
            self.key("dedupe", dedupe) if dedupe else "",
            self.key("inbox"),
            self.key("pending", session),
            self.key("seq"),
        ]
        accepted = await self._scripts["inbound"](keys=keys, args=[inbound_to_json(message), session, int(RETENTION)])
        if not accepted:
            logger.info("[%s] message %s already accepted; ignored", session, message.id)
        return bool(accepted)

    async def consume_inbound(self) -> InboundMessage:
        if not self._reading_inbound:
            self._reading_inbound = True
            await self.start()
            reader = self._supervised("inbound", self._inbound_round)
            self._tasks.append(asyncio.create_task(reader, name="redis-bus:inbound"))
        return await self._inbound.get()

    async def begin_inbound(self, message_ids: Sequence[str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            for message_id in message_ids:
                pipe.incr(self.key("starts", message_id))
                pipe.expire(self.key("starts", message_id), int(RETENTION))
            await pipe.execute()

    async def complete_inbound(self, message_ids: Sequence[str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            for message_id in message_ids:
                if message_id not in self._entries:
                    continue
                entry, session = self._entries[message_id]
                pipe.xack(self.key("inbox"), WORKERS, entry)
                pipe.zrem(self.key("pending", session), entry)
                pipe.hdel(self.key("admitted", session), entry)
            await pipe.execute()
        await self._forget(message_ids)

    async def release_inbound(self, message_ids: Sequence[str]) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            for message_id in message_ids:
                if message_id in self._entries:
                    entry, session = self._entries[message_id]
                    pipe.decr(self.key("starts", message_id))
                    pipe.hdel(self.key("admitted", session), entry)
            await pipe.execute()
        await self._forget(message_ids)

    async def publish_outbound(self, message: OutboundMessage, completes: Sequence[str] = ()) -> bool:
        await self.start()
        known = [(m, *self._entries[m]) for m in completes if m in self._entries]
        channel = message.chat.channel
        keys = [self.key("out", message.id), self._outboxes.stream(channel), self.key("inbox"), self._outboxes.index]
        args: list[Any] = [message.id, outbound_to_json(message), int(RETENTION), WORKERS, channel]
        for _, entry, session in known:
            keys += [self.key("pending", session), self.key("admitted", session)]
            args.append(entry)
        fresh = await self._scripts["outbound"](keys=keys, args=args)
        await self._forget([m for m, _, _ in known])
        if not fresh:
            logger.info("[%s] outbound %s already journaled; dropped", message.chat.session_key, message.id)
        return bool(fresh)

    async def consume_outbound(self) -> OutboundMessage:
        if not self._reading_outbound:
            self._reading_outbound = True
            await self.start()
            reader = self._supervised("outbound", self._outboxes.read_round)
            self._tasks.append(asyncio.create_task(reader, name="redis-bus:outbound"))
        return await self._outboxes.queue.get()

    async def chunks_sent(self, message_id: str) -> int:
        return int(await self.redis.hget(self.key("out", message_id), "chunks") or 0)

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        await self.redis.hset(self.key("out", message_id), "chunks", index + 1)

    async def mark_sent(self, message_id: str) -> None:
        await self._finish_outbound(message_id, "sent")

    async def mark_failed(self, message_id: str, error: str) -> None:
        await self._finish_outbound(message_id, "failed", error)

    async def count_ambiguous(self, message_id: str) -> None:
        await self.redis.incr(self.key("stats", "ambiguous"))

    async def backlog(self) -> list[StreamBacklog]:
        """Per stream: the inbox for the workers, then each channel's outbox for its gateway."""
        await self.start()
        inbox = await stream_backlog(self.redis, self.key("inbox"), WORKERS)
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

    async def _finish_outbound(self, message_id: str, state: str, error: str | None = None) -> None:
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(self.key("out", message_id), mapping={"state": state, "error": error or ""})
            self._outboxes.acknowledge(pipe, message_id)
            if state == "failed":
                pipe.incr(self.key("stats", "outbound_failed"))
            await pipe.execute()

    async def _forget(self, message_ids: Sequence[str]) -> None:
        """Drop local bookkeeping; give up a session's lock once none of its entries runs here."""
        for message_id in message_ids:
            found = self._entries.pop(message_id, None)
            if found is None:
                continue
            entry, session = found
            running = self._inflight.get(session, set())
            running.discard(entry)
            self._claimed.discard(entry)
            if not running:
                self._inflight.pop(session, None)
                await self._scripts["release"](keys=[self.key("lock", session)], args=[self.consumer])

    async def _close_handoff(self, handoff: HandoffStream) -> None:
        from redis.exceptions import RedisError

        try:
            await handoff.close()
        except RedisError as exc:  # it lapses by itself; entries handed meanwhile are claimed after claim_idle
            logger.warning("redis bus: could not remove the handoff stream (%s)", exc)

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

    async def _inbound_round(self, fresh: bool) -> None:
        """Claim idle entries, read new ones, admit what may run; renew what this worker holds.

        A fresh round (the first, or the first after an outage) reads this worker's own pending entries first.
        """
        inbox = self.key("inbox")
        if self._handoff is None:
            ttl = 2 * max(self._claim_idle_ms, self._lease_ms)
            self._handoff = HandoffStream(self.redis, self.key("handoff", ""), self.consumer, WORKERS, ttl)
        if fresh:
            await self._handoff.open()
            self._hold(read_entries(await self._read({inbox: "0"}, count=10_000), inbox)[0])
            self._next_claim = self._next_renew = 0.0
        now = time.monotonic()
        if now >= self._next_renew:
            await self._renew()
            self._next_renew = now + self._lease_ms / 3000
        if now >= self._next_claim:
            result = await self.redis.xautoclaim(inbox, WORKERS, self.consumer, self._claim_idle_ms, "0-0", BATCH)
            self._hold(read_entries([[inbox, result[1]]], inbox)[0], claimed=True)
            self._next_claim = now + max(self._claim_idle_ms / 4000, 0.05)
        block = self._block_ms if self._held else self._idle_block_ms
        streams = {inbox: ">", self._handoff.key: ">"}
        self._hold(await self._handoff.take(await self._read(streams, count=BATCH, block=block), inbox))
        await self._admit_held()
        await self._trimmer.maybe_trim(self.redis, [(inbox, WORKERS)])

    async def _read(self, streams: dict[str, str], **options: int) -> Any:
        return await self.redis.xreadgroup(WORKERS, self.consumer, streams, **options)

    def _hold(self, read: list[ReadEntry], claimed: bool = False) -> None:
        for item in read:
            entry = item.entry
            if entry in self._held or any(entry in s for s in self._inflight.values()):
                continue
            self._held[entry] = item.message
            if claimed or item.claimed:
                self._claimed.add(entry)
            if claimed:
                logger.warning("[%s] claimed message %s from a worker gone idle", item.session, item.message.id)

    async def _admit_held(self) -> None:
        waiting: set[str] = set()  # sessions whose earlier entry must wait: their later ones wait too
        for entry in sorted(self._held, key=_entry_order):
            message = self._held[entry]
            session = message.chat.session_key
            if session in waiting:
                continue
            keys = [self.key(part, session) for part in ("pending", "admitted", "lock")] + [self.key("inbox")]
            assert self._handoff is not None
            claimed = int(entry in self._claimed)
            args = [entry, self.consumer, self._lease_ms, WORKERS, self._handoff.prefix, claimed]
            verdict = await self._scripts["admit"](keys=keys, args=args)
            if verdict == 0:
                waiting.add(session)
                continue
            del self._held[entry]
            if verdict == 2:
                self._claimed.discard(entry)
                logger.info("[%s] message %s handed to the worker running the session's turn", session, message.id)
                continue
            if verdict == -1:
                await self.redis.xack(self.key("inbox"), WORKERS, entry)
                continue
            self._entries[message.id] = (entry, session)
            self._inflight.setdefault(session, set()).add(entry)
            if entry in self._claimed and await self._crashed_too_often(message):
                continue
            self._inbound.put_nowait(message)

    async def _crashed_too_often(self, message: InboundMessage) -> bool:
        """A claimed message whose turns started CRASH_LIMIT times without finishing fails with one apology."""
        if int(await self.redis.get(self.key("starts", message.id)) or 0) < CRASH_LIMIT:
            return False
        logger.error("[%s] message %s crashed workers twice; marked failed", message.chat.session_key, message.id)
        await self.redis.incr(self.key("stats", "inbound_failed"))
        if message.kind == "user":
            apology = OutboundMessage(message.chat, CRASH_APOLOGY, message.id, message.platform_message_id, "error")
            await self.publish_outbound(apology, completes=[message.id])
        else:
            await self.complete_inbound([message.id])
        return True

    async def _renew(self) -> None:
        """Keep this worker's session locks and the idle time of its entries fresh, so nobody claims them."""
        for session in list(self._inflight):
            await self._scripts["renew"](keys=[self.key("lock", session)], args=[self.consumer, self._lease_ms])
        await self.touch(self.key("inbox"), WORKERS)
        if self._handoff is not None:
            await self._handoff.keep_alive()

    async def touch(self, stream: str, group: str) -> None:
        """Reset the idle time of this consumer's pending entries, so nobody claims them while it lives."""
        mine = await self.redis.xpending_range(stream, group, "-", "+", 10_000, consumername=self.consumer)
        ids = [row["message_id"] for row in mine]
        if ids:
            await self.redis.xclaim(stream, group, self.consumer, 0, ids, justid=True)
