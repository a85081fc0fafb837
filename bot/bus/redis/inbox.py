"""The inbound side of the redis bus: one stream read by every worker, each session's turns in order.

Inbound entries go to the `workers` group. A worker runs an entry only once it is admitted (a Lua script): no
other worker holds the session's lock, and every earlier pending entry of the session was admitted by this
worker, so one session's turns run one at a time, in arrival order, across workers. A worker renews its locks,
the idle time of its entries and its liveness lease (`alive:<worker>`, renewed last, so it outlives the locks)
every quarter of the lease; once that lease lapses the worker is dead and another claims its entries
(CLAIM_DEAD, checked every twelfth of a lease) and runs them again. A worker whose connections all closed
(its process died) has its lease ended by the first worker to notice (departures.py), well before it lapses.
Entries idle past `claim_idle` are claimed as well (XAUTOCLAIM), a safety net; a live worker's entries stay its
own, however long its turns take. An entry of a session whose turn runs on another worker is handed to that
worker (handoff.py), so /stop, /approve and steering reach the running turn.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING

from bot.bus.dead_letters import CRASH_APOLOGY, CRASH_REASON, apology_for
from bot.bus.journal import CRASH_LIMIT, RETENTION, dedupe_key
from bot.bus.messages import InboundMessage, OutboundMessage, inbound_to_json
from bot.bus.redis.connection import StreamRead, StreamScope
from bot.bus.redis.departures import Departures
from bot.bus.redis.handoff import HandoffStream, ReadEntry, read_entries
from bot.bus.redis.outbox import Completion
from bot.bus.redis.scripts import ADMIT, BEGIN, CLAIM_DEAD, PUBLISH_INBOUND, RELEASE, RENEW
from bot.bus.redis.trim import StreamTrimmer

if TYPE_CHECKING:
    from redis.typing import EncodableT, KeyT, StreamIdT

    from bot.bus.redis.wire import AsyncWire, AsyncWiredScript

logger = logging.getLogger(__name__)

WORKERS = "workers"
BATCH = 100
RENEWALS_PER_LEASE = 4  # a worker renews every quarter of its lease, so a stall of half a lease still keeps it
DEAD_CHECKS_PER_LEASE = 12  # a dead worker's entries are claimed at most a twelfth of a lease after it lapsed

Fail = Callable[[Sequence[InboundMessage], str, OutboundMessage | None], Awaitable[None]]


def _entry_order(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq)


class RedisInbox:
    """Accepts inbound messages into the inbox stream and hands this worker the ones it may run, in session order."""

    def __init__(
        self,
        scope: StreamScope,
        lease_ms: int,
        claim_idle_ms: int,
        block_ms: int,
        idle_block_ms: int,
        fail: Fail,
    ) -> None:
        self._scope = scope
        self._lease_ms = lease_ms
        self._claim_idle_ms = claim_idle_ms
        self._block_ms = block_ms
        self._idle_block_ms = idle_block_ms
        self._fail = fail  # how a message that crashed workers too often becomes a dead letter, with its apology
        self.queue: asyncio.Queue[InboundMessage] = asyncio.Queue()
        self._held: dict[str, InboundMessage] = {}
        self._claimed: set[str] = set()
        self._entries: dict[str, tuple[str, str]] = {}  # message id -> (entry id, session key)
        self._inflight: dict[str, set[str]] = {}  # session key -> admitted entry ids
        self._next_claim = self._next_dead_check = self._next_renew = 0.0
        self._handoff: HandoffStream | None = None
        self._trimmer = StreamTrimmer()
        self._departures = Departures()
        self._scripts: dict[str, AsyncWiredScript] = {}
        self._wire: AsyncWire | None = None  # this reader's own, for its blocking reads

    @property
    def stream(self) -> str:
        """The inbox stream's key."""
        return self._scope.key("inbox")

    def open(self) -> None:
        """Register the inbox's scripts with the scope's (new) client."""
        sources = {
            "inbound": PUBLISH_INBOUND,
            "admit": ADMIT,
            "renew": RENEW,
            "release": RELEASE,
            "claim_dead": CLAIM_DEAD,
        }
        self._scripts = {name: self._scope.script(source) for name, source in sources.items()}
        self._wire = self._scope.reader_wire()

    async def create_group(self) -> None:
        """Make sure the inbox has the workers group (idempotent; again after the server lost its data)."""
        from redis.exceptions import ResponseError

        try:
            await self._scope.redis.xgroup_create(self.stream, WORKERS, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    @property
    def alive_prefix(self) -> str:
        """Where each worker's liveness lease lives: this prefix and the worker's name."""
        return self._scope.key("alive", "")

    async def close(self) -> None:
        """Stop receiving handoffs, end the liveness lease: what this worker holds goes to another worker."""
        from redis.exceptions import RedisError

        handoff, self._handoff = self._handoff, None
        if handoff is None:
            return
        try:
            await handoff.close()
            await self._scope.redis.delete(self.alive_prefix + self._scope.consumer)
        except RedisError as exc:  # both lapse by themselves; the entries are claimed once the lease has
            logger.warning("redis bus: could not remove the handoff stream (%s)", exc)

    async def publish(self, message: InboundMessage) -> bool:
        """Accept a message into the inbox; False when its id (or its dedupe key) was accepted before."""
        key = self._scope.key
        session = message.chat.session_key
        dedupe = dedupe_key(message)
        keys = [
            key("in", message.id),
            key("dedupe", dedupe) if dedupe else "",
            self.stream,
            key("pending", session),
            key("seq"),
        ]
        accepted = await self._scripts["inbound"](keys=keys, args=[inbound_to_json(message), session, int(RETENTION)])
        if not accepted:
            logger.info("[%s] message %s already accepted; ignored", session, message.id)
        return bool(accepted)

    async def begin(self, message_ids: Sequence[str]) -> None:
        """Count a turn start for each message (toward the crash limit), in one script sent before the turn runs.

        Its reply is not awaited: the count is on its way to Redis before the turn does anything, ahead of
        the reply that completes the turn on the same connection.
        """
        if message_ids:
            keys = [self._scope.key("starts", message_id) for message_id in message_ids]
            await self._scope.post(BEGIN, keys, [int(RETENTION)])

    async def complete(self, message_ids: Sequence[str]) -> None:
        """Acknowledge the entries of these messages and drop them from their sessions' order."""
        async with self._scope.redis.pipeline(transaction=True) as pipe:
            for message_id in message_ids:
                if message_id not in self._entries:
                    continue
                entry, session = self._entries[message_id]
                pipe.xack(self.stream, WORKERS, entry)
                pipe.zrem(self._scope.key("pending", session), entry)
                pipe.hdel(self._scope.key("admitted", session), entry)
            await pipe.execute()
        await self.forget(message_ids)

    async def release(self, message_ids: Sequence[str]) -> None:
        """Give messages back unfinished (a graceful stop): the turn start is uncounted; they stay pending."""
        async with self._scope.redis.pipeline(transaction=True) as pipe:
            for message_id in message_ids:
                if message_id in self._entries:
                    entry, session = self._entries[message_id]
                    pipe.decr(self._scope.key("starts", message_id))
                    pipe.hdel(self._scope.key("admitted", session), entry)
            await pipe.execute()
        await self.forget(message_ids)

    def completion(self, message_ids: Sequence[str]) -> Completion:
        """What a reply must acknowledge to complete these messages (those this worker runs; others are skipped).

        It also gives up the lock of each session none of whose other entries runs here.
        """
        known = [(m, *self._entries[m]) for m in message_ids if m in self._entries]
        keys = [self._scope.key(part, session) for _, _, session in known for part in ("pending", "admitted")]
        entries = tuple(entry for _, entry, _ in known)
        sessions = dict.fromkeys(session for _, _, session in known)
        done = set(entries)
        locks = tuple(self._scope.key("lock", s) for s in sessions if self._inflight.get(s, set()) <= done)
        completed = tuple(m for m, _, _ in known)
        return Completion(self.stream, WORKERS, completed, entries, tuple(keys), locks, self._scope.consumer)

    async def forget(self, message_ids: Sequence[str], released: Sequence[str] = ()) -> None:
        """Drop local bookkeeping; give up a session's lock once none of its entries runs here (unless `released`)."""
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
                lock = self._scope.key("lock", session)
                if lock not in released:
                    await self._scripts["release"](keys=[lock], args=[self._scope.consumer])

    async def read_round(self, fresh: bool) -> None:
        """Claim idle entries, read new ones, admit what may run; renew what this worker holds.

        A fresh round (the first, or the first after an outage) reads this worker's own pending entries first.
        """
        inbox = self.stream
        redis = self._scope.redis
        if self._handoff is None:
            ttl = 2 * max(self._claim_idle_ms, self._lease_ms)
            self._handoff = HandoffStream(redis, self._scope.key("handoff", ""), self._scope.consumer, WORKERS, ttl)
        if fresh:
            await self._keep_alive()  # before any read: a worker reading entries is always seen alive
            await self._handoff.open()
            own: dict[KeyT, StreamIdT] = {inbox: "0"}
            self._hold(read_entries(await self._read(own, count=10_000), inbox)[0])
            self._next_claim = self._next_dead_check = self._next_renew = 0.0
        now = time.monotonic()
        if now >= self._next_renew:
            await self._renew()
            self._next_renew = now + self._lease_ms / 1000 / RENEWALS_PER_LEASE
        if await self._end_departed() or now >= self._next_dead_check:
            await self._claim_dead()
            self._next_dead_check = now + max(self._lease_ms / 1000 / DEAD_CHECKS_PER_LEASE, 0.05)
        if now >= self._next_claim:
            await self._claim_idle()
            self._next_claim = now + max(self._claim_idle_ms / 4000, 0.05)
        block = self._block_ms if self._held else self._idle_block_ms
        streams: dict[KeyT, StreamIdT] = {inbox: ">", self._handoff.key: ">"}
        self._hold(await self._handoff.take(await self._read(streams, count=BATCH, block=block), inbox))
        await self._admit_held()
        await self._trimmer.maybe_trim(redis, [(inbox, WORKERS)])

    async def _end_departed(self) -> bool:
        """End the liveness lease of each worker whose connections all closed; True when one was ended."""
        ended = False
        for worker in await self._departures.gone(self._scope.redis):
            if await self._scope.redis.delete(self.alive_prefix + worker):
                logger.warning(
                    "redis bus: worker %s disconnected; its lease ended, its messages are taken over", worker
                )
                ended = True
        return ended

    async def _claim_dead(self) -> None:
        """Take the entries of dead workers: those whose liveness lease lapsed (or was ended by `_end_departed`)."""
        inbox, me = self.stream, self._scope.consumer
        dead = await self._scripts["claim_dead"](keys=[inbox], args=[WORKERS, me, self.alive_prefix, BATCH])
        entries = [(entry, dict(zip(fields[::2], fields[1::2], strict=True))) for entry, fields in dead if fields]
        self._hold(read_entries([[inbox, entries]], inbox)[0], claimed=True)

    async def _claim_idle(self) -> None:
        """The safety net: take entries nobody touched for claim_idle."""
        inbox, me = self.stream, self._scope.consumer
        result = await self._scope.redis.xautoclaim(inbox, WORKERS, me, self._claim_idle_ms, "0-0", BATCH)
        self._hold(read_entries([[inbox, result[1]]], inbox)[0], claimed=True)

    async def _keep_alive(self) -> None:
        await self._scope.redis.set(self.alive_prefix + self._scope.consumer, "1", px=self._lease_ms)

    async def _read(self, streams: dict[KeyT, StreamIdT], count: int, block: int | None = None) -> StreamRead:
        assert self._wire is not None, "the redis bus is not started"
        return await self._scope.read_group(self._wire, WORKERS, streams, count, block)

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
        assert self._handoff is not None
        worker, handoff = self._scope.consumer, self._handoff.prefix
        for entry in sorted(self._held, key=_entry_order):
            message = self._held[entry]
            session = message.chat.session_key
            if session in waiting:
                continue
            keys = [self._scope.key(part, session) for part in ("pending", "admitted", "lock")] + [self.stream]
            claimed = int(entry in self._claimed)
            args: list[EncodableT] = [entry, worker, self._lease_ms, WORKERS, handoff, claimed, self.alive_prefix]
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
                await self._scope.redis.xack(self.stream, WORKERS, entry)
                continue
            self._entries[message.id] = (entry, session)
            self._inflight.setdefault(session, set()).add(entry)
            if entry in self._claimed and await self._crashed_too_often(message):
                continue
            self.queue.put_nowait(message)

    async def _crashed_too_often(self, message: InboundMessage) -> bool:
        """A claimed message whose turns started CRASH_LIMIT times without finishing fails with one apology."""
        redis = self._scope.redis
        starts = int(await redis.get(self._scope.key("starts", message.id)) or 0)
        if starts < CRASH_LIMIT:
            return False
        logger.error("[%s] message %s crashed workers twice; marked failed", message.chat.session_key, message.id)
        await self._fail(
            [message], CRASH_REASON, apology_for(message, CRASH_APOLOGY) if message.kind == "user" else None
        )
        return True

    async def _renew(self) -> None:
        """Keep this worker's session locks and the idle time of its entries fresh, so nobody claims them."""
        for session in list(self._inflight):
            lock = self._scope.key("lock", session)
            await self._scripts["renew"](keys=[lock], args=[self._scope.consumer, self._lease_ms])
        await self._scope.touch(self.stream, WORKERS)
        if self._handoff is not None:
            await self._handoff.keep_alive()
        await self._keep_alive()  # last, so the locks lapse before it: a claimer then finds the sessions free
