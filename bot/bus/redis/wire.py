"""Lean connections for the commands every message sends: RESP packed and parsed by hiredis, nothing in between.

redis-py spends most of a nearby Redis's round trip in its own layers (the pool, the retry wrapper, its
metrics hooks, packing in Python): about 150–190 µs of CPU per asyncio command and 65–90 µs per sync
one, where the socket and hiredis alone take 25–75 µs. A wire keeps one connection of its own: the
asyncio one pipelines its callers' commands and matches replies in order, the sync one serves one call
at a time. A wire that cannot connect, loses its connection or reads garbage drops it and raises
`WireDown`; callers then send the command through the redis-py client, which retries as it always did
(a command whose reply was lost may run twice, as with redis-py's own retries). A wire that gets no reply
within its timeout drops its connection and raises redis-py's TimeoutError at once: the server is there
but not answering, and its callers retry with a backoff of their own. A reply error is raised as
redis-py raises it. Only plain TCP URLs (redis://) get a wire; others always take redis-py's path.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import socket
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import hiredis
    from redis.commands.core import AsyncScript
    from redis.typing import EncodableT, KeyT

logger = logging.getLogger(__name__)


class WireDown(Exception):
    """The wire's connection failed; the command should go through the redis-py client instead."""


def wire_target(url: str) -> dict[str, Any] | None:
    """Host, port, db and credentials of a redis:// URL; None for a URL a wire does not serve (TLS, unix)."""
    if not url.startswith("redis://"):
        return None
    from redis.connection import parse_url

    found = parse_url(url)
    return {key: found.get(key) for key in ("host", "port", "db", "username", "password")}


def _reader() -> hiredis.Reader:
    import hiredis
    from redis.exceptions import ResponseError

    return hiredis.Reader(encoding="utf-8", replyError=ResponseError)


def _pack(args: tuple[EncodableT, ...]) -> bytes:
    import hiredis

    return bytes(hiredis.pack_command(args))  # type: ignore[arg-type]  # its stub takes a 1-tuple for any tuple


def raised(reply: Any) -> Any:
    """The reply, or the error it carries raised as redis-py raises it."""
    if isinstance(reply, Exception):
        from redis.exceptions import NoScriptError

        if str(reply).startswith("NOSCRIPT"):
            raise NoScriptError(str(reply))
        raise reply
    return reply


def _log_failure(future: asyncio.Future[Any]) -> None:
    """A posted command's outcome: an error reply or a lost connection is logged, nothing else."""
    if future.cancelled():
        return
    outcome = future.exception() or future.result()  # a reply error comes as a result carrying the exception
    if isinstance(outcome, Exception):
        logger.warning("redis: a command sent without waiting failed (%s: %s)", type(outcome).__name__, outcome)


def _handshake(target: dict[str, Any], name: str | None = None) -> list[tuple[EncodableT, ...]]:
    """The commands a new connection sends first: AUTH and SELECT, as the URL asks, and its name when given."""
    commands: list[tuple[EncodableT, ...]] = []
    if target["password"] is not None:
        user = (target["username"],) if target["username"] else ()
        commands.append(("AUTH", *user, target["password"]))
    if target["db"]:
        commands.append(("SELECT", target["db"]))
    if name is not None:
        commands.append(("CLIENT", "SETNAME", name))
    return commands


class _Replies(asyncio.Protocol):
    """One TCP connection: replies fill the oldest waiting future, in order."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self.lost = False
        self._reader = _reader()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's classes

    def data_received(self, data: bytes) -> None:
        self._reader.feed(data)
        try:
            while (reply := self._reader.gets()) is not False:
                future = self.waiting.popleft()
                if not future.done():  # its caller gave up (cancelled): the reply is dropped, the order kept
                    future.set_result(reply)
        except Exception:  # a protocol error, or a reply nobody waits for: the stream cannot be trusted
            self.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self.abort()

    def abort(self) -> None:
        """Close the connection and fail every waiting call with WireDown."""
        self.lost = True
        if self.transport is not None:
            self.transport.abort()
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(WireDown("the connection was lost"))


class AsyncWire:
    """An asyncio connection for short commands (never a blocking one), shared by every task of one loop."""

    def __init__(self, url: str, timeout: float, name: str | None = None) -> None:
        self._target = wire_target(url)
        self._timeout = timeout
        self._name = name
        self._replies: _Replies | None = None
        self._connecting: asyncio.Lock | None = None

    @property
    def usable(self) -> bool:
        """Whether this URL has a wire at all."""
        return self._target is not None

    async def call(self, *args: EncodableT) -> Any:
        """Send one command and return its reply; WireDown when the connection failed or timed out."""
        replies = self._replies
        if replies is None or replies.lost:
            replies = await self._connect()
        return await self._send(replies, args)

    def post(self, *args: EncodableT) -> bool:
        """Send one command without waiting for its reply (an error in it is logged); False when not connected."""
        replies = self._replies
        if replies is None or replies.lost:
            return False
        assert replies.transport is not None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_log_failure)
        replies.transport.write(_pack(args))
        replies.waiting.append(future)
        return True

    async def _send(self, replies: _Replies, args: tuple[EncodableT, ...]) -> Any:
        assert replies.transport is not None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        replies.transport.write(_pack(args))
        replies.waiting.append(future)
        try:
            async with asyncio.timeout(self._timeout):
                return raised(await future)
        except TimeoutError:
            from redis.exceptions import TimeoutError as RedisTimeout

            replies.abort()  # a reply may still come: nothing later on this connection can be matched
            raise RedisTimeout("Timeout reading from the wire") from None

    async def _connect(self) -> _Replies:
        if self._target is None:
            raise WireDown("no wire for this URL")
        self._connecting = self._connecting or asyncio.Lock()
        async with self._connecting:
            if self._replies is not None and not self._replies.lost:
                return self._replies  # another caller connected meanwhile
            loop = asyncio.get_running_loop()
            try:
                async with asyncio.timeout(self._timeout):
                    _, replies = await loop.create_connection(_Replies, self._target["host"], self._target["port"])
            except (OSError, TimeoutError) as exc:
                raise WireDown(f"could not connect: {exc}") from exc
            try:
                for command in _handshake(self._target, self._name):
                    await self._send(replies, command)
            except BaseException:
                replies.abort()
                raise
            self._replies = replies
            return replies

    def close(self) -> None:
        """Drop the connection (the next call makes a new one)."""
        if self._replies is not None:
            self._replies.abort()
            self._replies = None


class SyncWire:
    """A blocking socket for a sync store's commands; one call at a time across threads."""

    def __init__(self, url: str, timeout: float) -> None:
        self._target = wire_target(url)
        self._timeout = timeout
        self._socket: socket.socket | None = None
        self._reader = _reader()
        self._pid = 0
        self._lock = threading.Lock()

    @property
    def usable(self) -> bool:
        """Whether this URL has a wire at all."""
        return self._target is not None

    def call(self, *args: EncodableT) -> Any:
        """Send one command and return its reply; WireDown when the connection failed or timed out."""
        return raised(self.exchange([args])[0])

    def exchange(self, commands: Sequence[tuple[EncodableT, ...]]) -> list[Any]:
        """Send commands in one write and read their replies, a reply error as its exception (not raised)."""
        from hiredis import ProtocolError

        with self._lock:
            try:
                if self._socket is None or self._pid != os.getpid():
                    self._connect()
                return self._exchange(commands)
            except TimeoutError as exc:
                from redis.exceptions import TimeoutError as RedisTimeout

                self.close()
                raise RedisTimeout("Timeout reading from the wire") from exc
            except (OSError, ProtocolError) as exc:
                self.close()
                raise WireDown(str(exc)) from exc

    def _exchange(self, commands: Sequence[tuple[EncodableT, ...]]) -> list[Any]:
        assert self._socket is not None
        self._socket.sendall(b"".join(_pack(command) for command in commands))
        replies: list[Any] = []
        while len(replies) < len(commands):
            while (reply := self._reader.gets()) is False:
                data = self._socket.recv(65536)
                if not data:
                    raise ConnectionResetError("the server closed the connection")
                self._reader.feed(data)
            replies.append(reply)
        return replies

    def _connect(self) -> None:
        if self._target is None:
            raise ConnectionRefusedError("no wire for this URL")
        self._socket = socket.create_connection((self._target["host"], self._target["port"]), self._timeout)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._socket.settimeout(self._timeout)
        self._reader = _reader()
        self._pid = os.getpid()
        try:
            for reply in self._exchange(_handshake(self._target)):
                raised(reply)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Drop the connection (the next call makes a new one)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class AsyncWiredScript:
    """A Lua script sent as EVALSHA over a wire (loaded there on NOSCRIPT); through redis-py when the wire is down."""

    def __init__(self, source: str, wire: AsyncWire, fallback: AsyncScript) -> None:
        self._source = source
        self._wire = wire
        self._fallback = fallback

    async def __call__(self, keys: Sequence[KeyT], args: Sequence[EncodableT]) -> Any:
        """Run the script with these keys and arguments."""
        from redis.exceptions import NoScriptError

        if self._wire.usable:
            command = ("EVALSHA", self._fallback.sha, len(keys), *keys, *args)
            try:
                try:
                    return await self._wire.call(*command)
                except NoScriptError:
                    await self._wire.call("SCRIPT", "LOAD", self._source)
                    return await self._wire.call(*command)
            except WireDown:
                pass
        return await self._fallback(keys=keys, args=args)
