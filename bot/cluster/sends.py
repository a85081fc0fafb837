"""How the sync stores send their per-message commands: over the wire, and writes nobody waits for ride along.

A turn writes its ledger record, its token totals and its reply to the session one after another, in
one step of the event loop: each was a round trip of its own. A write whose caller needs no answer is
deferred instead: it goes out in the same write as the next command this process sends to Redis in that
step (any command, on any client: `RedisState` flushes first), or on its own as soon as the loop runs
its next callbacks, so Redis sees every write in the order it was made and other processes see it
about as soon as before. A deferred write that fails is logged (its callers are ones that already
logged and carried on: the ledger, token totals, the owner's DM); a crash loses what was deferred in
the last moments, as it loses a write it had not sent yet. When the wire is down, each command goes
through the redis-py client instead; when it got no answer in time, each fails with redis-py's
TimeoutError.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from redis.exceptions import TimeoutError as RedisTimeout

from bot.bus.redis.wire import SyncWire, WireDown, raised

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT, KeyT

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Send:
    """One command: for a script, its EVALSHA and the source to EVAL when the server lacks it."""

    command: tuple[EncodableT, ...]
    source: str | None = None
    on_reply: Callable[[Any], None] | None = None  # a deferred command's use of its reply


class StoreSends:
    """The stores' commands on one sync wire, deferred writes sent ahead of the next command."""

    def __init__(self, wire: SyncWire, client: Callable[[], redis.Redis]) -> None:
        self._wire = wire
        self._client = client
        self._pending: list[Send] = []
        self._lock = threading.Lock()
        self._flush_soon: asyncio.Handle | None = None
        self._loaded_shas: set[str] = set()  # scripts this process loaded on the server

    def run(self, send: Send) -> Any:
        """Send now, after whatever is deferred; the reply (a reply error raised)."""
        pending = self._take()
        return raised(self._send([*pending, send], len(pending))[-1])

    def defer(self, send: Send) -> None:
        """Send with the next command of this step of the event loop, or alone when the loop next runs callbacks."""
        with self._lock:
            self._pending.append(send)
            if len(self._pending) > 1:
                return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop in this thread: nothing would come to flush it
            self.flush()
            return
        self._flush_soon = loop.call_soon(self.flush)

    def flush(self) -> None:
        """Send whatever is deferred now."""
        pending = self._take()
        if pending:
            self._send(pending, len(pending))

    def close(self) -> None:
        """Drop the wire's connection (the next command makes a new one)."""
        self._wire.close()

    @property
    def pending(self) -> bool:
        """Whether a deferred write waits."""
        return bool(self._pending)

    def _take(self) -> list[Send]:
        with self._lock:
            pending, self._pending = self._pending, []
            soon, self._flush_soon = self._flush_soon, None
        if soon is not None:
            soon.cancel()
        return pending

    def _send(self, sends: list[Send], deferred: int) -> list[Any]:
        """Every command's reply (errors as values); the first `deferred` ones are settled here."""
        replies = self._over_wire(sends) if self._wire.usable else None
        if replies is None:
            replies = [self._through_client(send) for send in sends]
        else:
            replies = [self._loaded(send, reply) for send, reply in zip(sends, replies, strict=True)]
        for send, reply in zip(sends[:deferred], replies, strict=False):
            if isinstance(reply, Exception):
                logger.warning("redis: a deferred %s failed (%s: %s)", send.command[0], type(reply).__name__, reply)
            elif send.on_reply is not None:
                send.on_reply(reply)
        return replies

    def _over_wire(self, sends: list[Send]) -> list[Any] | None:
        """The replies over the wire, each script loaded before its first use on it; None when the wire is down."""
        commands: list[tuple[EncodableT, ...]] = []
        loads: set[int] = set()  # the positions of SCRIPT LOADs, whose replies are not the caller's
        for send in sends:
            sha = send.command[1] if send.source is not None else None
            if send.source is not None and sha not in self._loaded_shas:
                loads.add(len(commands))
                commands.append(("SCRIPT", "LOAD", send.source))
            commands.append(send.command)
        try:
            replies = self._wire.exchange(commands)
        except WireDown:
            self._loaded_shas.clear()  # the next connection may reach a server that restarted
            return None
        except RedisTimeout as exc:  # no answer in time: each command's reply is that error
            self._loaded_shas.clear()
            return [exc] * len(sends)
        self._loaded_shas.update(str(send.command[1]) for send in sends if send.source is not None)
        return [reply for index, reply in enumerate(replies) if index not in loads]

    def _loaded(self, send: Send, reply: Any) -> Any:
        """The reply, after running the script's source when the server lost its hash (SCRIPT FLUSH) meanwhile."""
        if send.source is None or not (isinstance(reply, Exception) and str(reply).startswith("NOSCRIPT")):
            return reply
        self._loaded_shas.clear()
        evaluate = ("EVAL", send.source, *send.command[2:])
        try:
            return self._wire.exchange([evaluate])[0]
        except WireDown:
            return self._through_client(send)

    def _through_client(self, send: Send) -> Any:
        command = ("EVAL", send.source, *send.command[2:]) if send.source is not None else send.command
        try:
            return self._client().execute_command(*command)
        except Exception as exc:  # handed back as a reply: raised for the caller, logged for a deferred write
            return exc


class StoreScript:
    """A Lua script of a sync store: run now (its reply), or deferred (its reply, if wanted, to a callback)."""

    def __init__(self, source: str, sends: StoreSends) -> None:
        self._source = source
        self._sends = sends
        self._sha = hashlib.sha1(source.encode()).hexdigest()

    def __call__(self, keys: Sequence[KeyT], args: Sequence[EncodableT]) -> Any:
        """Run the script and return its reply."""
        return self._sends.run(Send(self._command(keys, args), self._source))

    def defer(
        self, keys: Sequence[KeyT], args: Sequence[EncodableT], on_reply: Callable[[Any], None] | None = None
    ) -> None:
        """Run the script with the next command sent (see StoreSends.defer)."""
        self._sends.defer(Send(self._command(keys, args), self._source, on_reply))

    def _command(self, keys: Sequence[KeyT], args: Sequence[EncodableT]) -> tuple[EncodableT, ...]:
        return ("EVALSHA", self._sha, len(keys), *keys, *args)
