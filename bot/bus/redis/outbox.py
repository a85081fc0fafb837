"""The outbound side of the redis bus: one stream per channel, read only by the gateway that runs that channel.

Replies go to `outbox:<channel key>` (`outbox:telegram`, or `outbox:telegram@work` for a named bot); a gateway
reads the outboxes of the channels it holds the receiver lease for (`deliver_for`), in the `gateways` group,
so gateways with different channels never take each other's replies, and a standby that takes a channel over
claims what its predecessor left unsent. The set `outboxes` names every channel that ever had a reply: the
backlog in `relaybot status` lists them, and a bus never told which channels it delivers (one process serving
everything, as in tests) reads them all. A reply is journaled (by id, so twice is once) in the same script that
completes the inbox entries it answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.bus.journal import RETENTION
from bot.bus.messages import OutboundMessage, outbound_from_json, outbound_to_json
from bot.bus.redis.backlog import StreamBacklog, stream_backlog
from bot.bus.redis.connection import StreamRead, StreamScope, as_text
from bot.bus.redis.scripts import FINISH, PUBLISH_OUTBOUND
from bot.bus.redis.trim import StreamTrimmer

if TYPE_CHECKING:
    from redis.typing import EncodableT, KeyT, StreamIdT

    from bot.bus.redis.wire import AsyncWire, AsyncWiredScript

logger = logging.getLogger(__name__)

GATEWAYS = "gateways"
BATCH = 100


@dataclass(frozen=True, slots=True)
class Completion:
    """Inbox entries a reply completes in the same write: the inbox and its group, and per entry its session's keys."""

    inbox: str
    group: str
    message_ids: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()  # (pending zset, admitted hash) per entry
    locks: tuple[str, ...] = ()  # session locks the holder gives up with it (none of their entries runs on)
    holder: str = ""


class ChannelOutboxes:
    """Journals replies in their channel's outbox; reads this gateway's outboxes into one queue and settles them."""

    def __init__(self, scope: StreamScope, claim_idle_ms: int, block_ms: int, discover_ms: int) -> None:
        self._scope = scope
        self._claim_idle_ms = claim_idle_ms
        self._block_ms = block_ms
        self._discover_ms = discover_ms
        self.channels: tuple[str, ...] | None = None  # None: every channel that has an outbox
        self.queue: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self._entries: dict[str, tuple[str, str, str]] = {}  # outbound message id -> (stream, entry id, body)
        self._grouped: set[str] = set()  # channels whose outbox has the gateways group
        self._known: list[str] = []  # every channel's outbox, as last discovered (when `channels` is None)
        self._next_discovery = 0.0
        self._next_claim = 0.0
        self._trimmer = StreamTrimmer()
        self._publish: AsyncWiredScript | None = None
        self._finish: AsyncWiredScript | None = None
        self._wire: AsyncWire | None = None  # this reader's own, for its blocking reads

    def stream(self, channel: str) -> str:
        """The key of a channel's outbox stream."""
        return self._scope.key("outbox", channel)

    @property
    def index(self) -> str:
        """The set of channels that have an outbox stream."""
        return self._scope.key("outboxes")

    def open(self) -> None:
        """Register the journaling and settling scripts with the scope's (new) client."""
        self._publish = self._scope.script(PUBLISH_OUTBOUND)
        self._finish = self._scope.script(FINISH)
        self._wire = self._scope.reader_wire()

    def deliver_for(self, channels: Sequence[str]) -> None:
        """Read these channels' outboxes only."""
        self.channels = tuple(dict.fromkeys(channels))

    async def publish(self, message: OutboundMessage, completion: Completion) -> bool:
        """Journal a reply once (False for a known id) and complete `completion`'s entries, in one script."""
        assert self._publish is not None, "the redis bus is not started"
        channel = message.chat.channel_key
        keys = [self._scope.key("out", message.id), self.stream(channel), completion.inbox, self.index]
        args: list[EncodableT] = [message.id, outbound_to_json(message), int(RETENTION), completion.group, channel]
        args += [completion.holder, len(completion.entries), *completion.entries]
        fresh = await self._publish(keys=[*keys, *completion.keys, *completion.locks], args=args)
        if not fresh:
            logger.info("[%s] outbound %s already journaled; dropped", message.chat.session_key, message.id)
        return bool(fresh)

    async def chunks_sent(self, message_id: str) -> int:
        """How many leading chunks of a message the platform confirmed."""
        return int(await self._scope.redis.hget(self._scope.key("out", message_id), "chunks") or 0)

    async def mark_chunk_sent(self, message_id: str, index: int) -> None:
        """The platform confirmed chunk `index` of a message."""
        await self._scope.redis.hset(self._scope.key("out", message_id), "chunks", index + 1)

    async def finish(self, message_id: str, state: str, error: str | None = None) -> str | None:
        """Record a message as sent or failed and acknowledge its entry (when this gateway read it), in one script;
        the message's body when this gateway read it."""
        assert self._finish is not None, "the redis bus is not started"
        keys = [self._scope.key("out", message_id)]
        args: list[EncodableT] = [state, error or "", GATEWAYS]
        found = self._entries.pop(message_id, None)
        if found is not None:  # nothing to acknowledge when this gateway did not read the entry
            keys.append(found[0])
            args.append(found[1])
        await self._finish(keys=keys, args=args)
        return found[2] if found is not None else None

    async def count_ambiguous(self) -> None:
        """Count a send that may or may not have reached the platform."""
        await self._scope.redis.incr(self._scope.key("stats", "ambiguous"))

    async def create_groups(self, force: bool = True) -> list[str]:
        """Make sure each delivered channel's outbox has the gateways group; its streams, in channel order."""
        from redis.exceptions import ResponseError

        redis = self._scope.redis
        channels = self.channels if self.channels is not None else await self._discovered(force)
        for channel in channels:
            if channel in self._grouped and not force:
                continue
            try:
                await redis.xgroup_create(self.stream(channel), GATEWAYS, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise
            self._grouped.add(channel)
        return [self.stream(channel) for channel in channels]

    async def read_round(self, fresh: bool) -> None:
        """Own unfinished entries first (when fresh), then those of a gateway gone idle, then new ones."""
        redis = self._scope.redis
        consumer = self._scope.consumer
        streams = await self.create_groups(force=fresh)
        if not streams:
            await asyncio.sleep(self._discover_ms / 1000)  # nothing to read yet: look for a first outbox again
            return
        if fresh:
            own: dict[KeyT, StreamIdT] = dict.fromkeys(streams, "0")
            self._queue(await redis.xreadgroup(GATEWAYS, consumer, own, count=10_000))
            self._next_claim = 0.0
        now = time.monotonic()
        if now >= self._next_claim:
            for stream in streams:
                await self._scope.touch(stream, GATEWAYS)
                result = await redis.xautoclaim(stream, GATEWAYS, consumer, self._claim_idle_ms, "0-0", BATCH)
                self._queue([[stream, result[1]]])
            self._next_claim = now + max(self._claim_idle_ms / 4000, 0.05)
        new: dict[KeyT, StreamIdT] = dict.fromkeys(streams, ">")
        block = self._block_ms if self.channels is not None else self._discover_ms  # discovering: look again soon
        assert self._wire is not None, "the redis bus is not started"
        self._queue(await self._scope.read_group(self._wire, GATEWAYS, new, BATCH, block))
        await self._trimmer.maybe_trim(redis, [(stream, GATEWAYS) for stream in streams])

    def _queue(self, response: StreamRead) -> None:
        for stream, entries in response.items() if isinstance(response, dict) else response or ():
            for entry, fields in entries:
                if not fields or fields["id"] in self._entries:
                    continue
                self._entries[fields["id"]] = (stream, entry, fields["body"])
                self.queue.put_nowait(outbound_from_json(fields["body"]))

    async def backlog(self) -> list[StreamBacklog]:
        """The backlog of every channel's outbox, by stream name."""
        redis = self._scope.redis
        return [await stream_backlog(redis, self.stream(channel), GATEWAYS) for channel in await self._known_channels()]

    async def _discovered(self, force: bool) -> list[str]:
        """Every channel's outbox, looked up again at most every `discover_ms` (or when forced, or none is known)."""
        now = time.monotonic()
        if force or not self._known or now >= self._next_discovery:
            self._known = await self._known_channels()
            self._next_discovery = now + self._discover_ms / 1000
        return self._known

    async def _known_channels(self) -> list[str]:
        """Every channel that ever had a reply, in name order."""
        return sorted(as_text(channel) for channel in await self._scope.redis.smembers(self.index))
