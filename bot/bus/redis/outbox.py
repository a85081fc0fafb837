"""The outbound side of the redis bus: one stream per channel, read only by the gateway that runs that channel.

Replies go to `outbox:<channel>`; a gateway reads the outboxes of the channels it holds the receiver lease
for (`deliver_for`), in the `gateways` group, so gateways with different channels never take each other's
replies, and a standby that takes a channel over claims what its predecessor left unsent. The set
`outboxes` names every channel that ever had a reply: the backlog in `relaybot status` lists them, and a
bus never told which channels it delivers (one process serving everything, as in tests) reads them all.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bot.bus.messages import OutboundMessage, outbound_from_json
from bot.bus.redis.trim import StreamTrimmer

if TYPE_CHECKING:
    from bot.bus.redis import RedisBus

logger = logging.getLogger(__name__)

GATEWAYS = "gateways"
BATCH = 100


@dataclass(frozen=True, slots=True)
class StreamBacklog:
    """One stream's backlog: entries read but not acknowledged, and entries not read yet."""

    stream: str
    pending: int
    unread: int


async def stream_backlog(redis: Any, stream: str, group: str) -> StreamBacklog:
    """The backlog of `stream` for `group` (all of it unread when no reader ever created the group)."""
    found = {g["name"]: g for g in await redis.xinfo_groups(stream)} if await redis.exists(stream) else {}
    if group not in found:
        return StreamBacklog(stream, 0, int(await redis.xlen(stream)))
    return StreamBacklog(stream, int(found[group]["pending"]), int(found[group].get("lag") or 0))


class ChannelOutboxes:
    """Reads the outbox streams of this gateway's channels into one queue and acknowledges what was sent."""

    def __init__(self, bus: RedisBus, claim_idle_ms: int, block_ms: int, discover_ms: int) -> None:
        self._bus = bus
        self._claim_idle_ms = claim_idle_ms
        self._block_ms = block_ms
        self._discover_ms = discover_ms
        self.channels: tuple[str, ...] | None = None  # None: every channel that has an outbox
        self.queue: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self._entries: dict[str, tuple[str, str]] = {}  # outbound message id -> (stream, entry id)
        self._grouped: set[str] = set()  # channels whose outbox has the gateways group
        self._next_claim = 0.0
        self._trimmer = StreamTrimmer()

    def stream(self, channel: str) -> str:
        return self._bus.key("outbox", channel)

    @property
    def index(self) -> str:
        """The set of channels that have an outbox stream."""
        return self._bus.key("outboxes")

    def deliver_for(self, channels: Sequence[str]) -> None:
        self.channels = tuple(dict.fromkeys(channels))

    async def create_groups(self, force: bool = True) -> list[str]:
        """Make sure each delivered channel's outbox has the gateways group; its streams, in channel order."""
        from redis.exceptions import ResponseError

        redis = self._bus.redis
        channels = self.channels if self.channels is not None else sorted(await redis.smembers(self.index))
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
        redis = self._bus.redis
        consumer = self._bus.consumer
        streams = await self.create_groups(force=fresh)
        if not streams:
            await asyncio.sleep(self._discover_ms / 1000)  # nothing to read yet: look for a first outbox again
            return
        if fresh:
            self._queue(await redis.xreadgroup(GATEWAYS, consumer, dict.fromkeys(streams, "0"), count=10_000))
            self._next_claim = 0.0
        now = time.monotonic()
        if now >= self._next_claim:
            for stream in streams:
                await self._bus.touch(stream, GATEWAYS)
                result = await redis.xautoclaim(stream, GATEWAYS, consumer, self._claim_idle_ms, "0-0", BATCH)
                self._queue([[stream, result[1]]])
            self._next_claim = now + max(self._claim_idle_ms / 4000, 0.05)
        new = dict.fromkeys(streams, ">")
        block = self._block_ms if self.channels is not None else self._discover_ms  # discovering: look again soon
        self._queue(await redis.xreadgroup(GATEWAYS, consumer, new, count=BATCH, block=block))
        await self._trimmer.maybe_trim(redis, [(stream, GATEWAYS) for stream in streams])

    def _queue(self, response: Any) -> None:
        for stream, entries in response.items() if isinstance(response, dict) else response or ():
            for entry, fields in entries:
                if not fields or fields["id"] in self._entries:
                    continue
                self._entries[fields["id"]] = (stream, entry)
                self.queue.put_nowait(outbound_from_json(fields["body"]))

    def acknowledge(self, pipe: Any, message_id: str) -> None:
        """Add the XACK of a finished message's entry to `pipe` (nothing when this gateway did not read it)."""
        found = self._entries.pop(message_id, None)
        if found is not None:
            pipe.xack(found[0], GATEWAYS, found[1])

    async def backlog(self) -> list[StreamBacklog]:
        """The backlog of every channel's outbox, by stream name."""
        redis = self._bus.redis
        channels = sorted(await redis.smembers(self.index))
        return [await stream_backlog(redis, self.stream(channel), GATEWAYS) for channel in channels]
