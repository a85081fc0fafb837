"""The redis bus's connection: a client with bounded waits, and the scope its streams live in."""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.typing import EncodableT, KeyT, StreamIdT

    from bot.bus.redis.wire import AsyncWire, AsyncWiredScript

TIMEOUT = 5.0  # every command's socket wait; longer than any BLOCK, so a blocked read never times out

# An XREADGROUP reply: [[stream, [(entry id, fields), …]], …], or a dict by stream under RESP3.
StreamRead = list[list[Any]] | dict[Any, Any]


def connect(url: str, timeout: float = TIMEOUT, name: str | None = None) -> Redis:
    """A redis.asyncio client whose every wait is bounded and whose transient failures are retried twice.

    `name` is set on each of its connections (CLIENT SETNAME), so others can tell whether this process is connected.
    """
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
        client_name=name,
    )


def _fields(pairs: list[str] | None) -> dict[str, str] | None:
    """An entry's field-value list as a dict; None for an entry deleted since it was delivered."""
    return dict(zip(pairs[::2], pairs[1::2], strict=True)) if pairs else None


def as_text(reply: bytes | str) -> str:
    """A reply as text: the bus's clients decode replies already, so this only narrows the type."""
    return reply if isinstance(reply, str) else reply.decode()


def default_consumer() -> str:
    """A name unique to this bus: host, pid and a random suffix (a process may hold several in tests)."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class StreamScope:
    """Where one bus's streams live: its client (while open), keys under the bot's prefix, and this consumer's name."""

    def __init__(self, url: str, prefix: str, consumer: str, timeout: float = TIMEOUT) -> None:
        self.consumer = consumer
        self._url = url
        self._prefix = prefix
        self._timeout = timeout
        self._redis: Redis | None = None
        self._wire: AsyncWire | None = None
        self._reader_wires: list[AsyncWire] = []

    def key(self, *parts: str) -> str:
        """A key under this bot's prefix."""
        return ":".join((self._prefix, *parts))

    @property
    def client_name(self) -> str | None:
        """The name every connection of this scope carries in Redis (departures.py watches for it to vanish)."""
        from bot.bus.redis.departures import client_name

        return client_name(self.consumer)

    @property
    def is_open(self) -> bool:
        """Whether the client exists (from `open` until `close`)."""
        return self._redis is not None

    @property
    def redis(self) -> Redis:
        """The client; only while open."""
        assert self._redis is not None, "the redis bus is not started"
        return self._redis

    def open(self) -> Redis:
        """Make the client and the wire for the bus's scripts (no command is sent yet)."""
        from bot.bus.redis.wire import AsyncWire

        self._redis = connect(self._url, self._timeout, self.client_name)
        self._wire = AsyncWire(self._url, self._timeout, self.client_name)
        return self._redis

    def script(self, source: str) -> AsyncWiredScript:
        """A Lua script run over this scope's wire (the client's path when the wire is down); only while open."""
        from bot.bus.redis.wire import AsyncWiredScript

        assert self._wire is not None, "the redis bus is not started"
        return AsyncWiredScript(source, self._wire, self.redis.register_script(source))

    async def post(self, source: str, keys: Sequence[KeyT], args: Sequence[EncodableT]) -> None:
        """Run a script without waiting for its reply (an error is logged); awaited as `script` when not connected.

        The command is written to the wire before this returns, so Redis runs it before any later command.
        """
        assert self._wire is not None, "the redis bus is not started"
        if not self._wire.post("EVAL", source, len(keys), *keys, *args):
            await self.script(source)(keys=keys, args=args)

    def reader_wire(self) -> AsyncWire:
        """A wire of one reader's own, for its blocking reads (which would hold up every command on a shared one)."""
        from bot.bus.redis.wire import AsyncWire

        wire = AsyncWire(self._url, self._timeout, self.client_name)
        self._reader_wires.append(wire)
        return wire

    async def read_group(
        self, wire: AsyncWire, group: str, streams: dict[KeyT, StreamIdT], count: int, block: int | None = None
    ) -> StreamRead:
        """XREADGROUP over a reader's wire, shaped as redis-py's: [[stream, [(entry id, fields or None), …]], …]."""
        from bot.bus.redis.wire import WireDown

        if wire.usable:
            blocking: list[EncodableT] = ["BLOCK", block] if block is not None else []
            command: list[EncodableT] = [
                "XREADGROUP",
                "GROUP",
                group,
                self.consumer,
                "COUNT",
                count,
                *blocking,
                "STREAMS",
            ]
            try:
                reply = await wire.call(*command, *streams, *streams.values())
            except WireDown:
                pass
            else:
                return [
                    [stream, [(entry, _fields(pairs)) for entry, pairs in entries]] for stream, entries in reply or ()
                ]
        return await self.redis.xreadgroup(group, self.consumer, streams, count=count, block=block)

    async def close(self) -> None:
        """Close the client and the wires; `open` makes new ones."""
        for wire in (self._wire, *self._reader_wires):
            if wire is not None:
                wire.close()
        self._wire = None
        self._reader_wires.clear()
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def touch(self, stream: str, group: str) -> None:
        """Reset the idle time of this consumer's pending entries, so nobody claims them while it lives."""
        mine = await self.redis.xpending_range(stream, group, "-", "+", 10_000, consumername=self.consumer)
        ids: list[StreamIdT] = [row["message_id"] for row in mine]
        if ids:
            await self.redis.xclaim(stream, group, self.consumer, 0, ids, justid=True)
