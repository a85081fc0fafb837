"""The Redis connection the shared state stores use when `bus.backend` is redis: keys under the bot's prefix."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bot.bus.redis.connection import as_text

if TYPE_CHECKING:
    from collections.abc import Callable

    import redis
    import redis.asyncio
    from redis.typing import EncodableT, ZSetRangeResponse

    from bot.bus.redis.wire import SyncWire
    from bot.cluster.sends import StoreScript, StoreSends
    from bot.config.schema import Config

TIMEOUT = 10.0  # seconds a command or connect may take before it fails instead of freezing its caller


def zset_members(reply: ZSetRangeResponse) -> list[str]:
    """The members of a sorted-set range read without scores, as text; a scored entry is a TypeError."""
    texts: list[str] = []
    for item in reply:
        if not isinstance(item, bytes | str):
            raise TypeError(f"a sorted-set member came with its score where none was asked for: {item!r}")
        texts.append(as_text(item))
    return texts


def zset_scored(reply: ZSetRangeResponse) -> list[tuple[str, float]]:
    """The (member, score) pairs of a sorted-set range read with scores, members as text."""
    pairs: list[tuple[str, float]] = []
    for item in reply:
        if isinstance(item, bytes | str):
            raise TypeError(f"a sorted-set member came without its score where one was asked for: {item!r}")
        member, score = item
        pairs.append((as_text(member), float(score)))
    return pairs


class RedisState:
    """Lazily made sync and asyncio clients and a wire for one Redis URL; `key()` names a key under the bot's prefix."""

    def __init__(
        self,
        url: str,
        prefix: str = "relaybot",
        timeout: float = TIMEOUT,
        wire: Callable[[str, float], SyncWire] | None = None,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self._wire = wire  # makes the stores' wire (url, timeout); None: the SyncWire itself
        self._sync: redis.Redis | None = None
        self._async: redis.asyncio.Redis | None = None
        self._sends: StoreSends | None = None

    def key(self, *parts: str) -> str:
        """A key under this bot's prefix, e.g. key("pairing") -> "relaybot:pairing"."""
        return ":".join((self.prefix, *parts))

    @property
    def client(self) -> redis.Redis:
        """A redis.Redis (sync, str replies) for stores whose callers are sync; deferred writes are sent first."""
        if self._sends is not None and self._sends.pending:
            self._sends.flush()
        return self._client()

    def _client(self) -> redis.Redis:
        if self._sync is None:
            import redis

            self._sync = redis.Redis.from_url(
                self.url, decode_responses=True, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
            )
        return self._sync

    @property
    def sends(self) -> StoreSends:
        """The stores' per-message commands: over a lean wire, writes nobody waits for deferred (see sends.py)."""
        if self._sends is None:
            from bot.bus.redis.wire import SyncWire
            from bot.cluster.sends import StoreSends

            self._sends = StoreSends((self._wire or SyncWire)(self.url, self.timeout), self._client)
        return self._sends

    def script(self, source: str) -> StoreScript:
        """A Lua script for a sync store, sent through `sends`."""
        from bot.cluster.sends import StoreScript

        return StoreScript(source, self.sends)

    def command(self, *args: EncodableT) -> Any:
        """One command through `sends`, now; its reply."""
        from bot.cluster.sends import Send

        return self.sends.run(Send(args))

    def defer(self, *args: EncodableT) -> None:
        """One write through `sends`, with the next command sent."""
        from bot.cluster.sends import Send

        self.sends.defer(Send(args))

    @property
    def aclient(self) -> redis.asyncio.Redis:
        """A redis.asyncio.Redis (str replies) for stores whose callers are async; deferred writes are sent first."""
        if self._sends is not None and self._sends.pending:
            self._sends.flush()
        if self._async is None:
            import redis.asyncio as aioredis

            self._async = aioredis.from_url(
                self.url, decode_responses=True, socket_timeout=self.timeout, socket_connect_timeout=self.timeout
            )
        return self._async

    async def aclose(self) -> None:
        """Send what is deferred, close both clients and the wire (each is made again on next use)."""
        if self._sends is not None:
            self._sends.flush()
            self._sends.close()
        if self._async is not None:
            await self._async.aclose()
            self._async = None
        if self._sync is not None:
            self._sync.close()
            self._sync = None


def shared_state(config: Config) -> RedisState | None:
    """The config's Redis state, or None on the local backend."""
    if config.bus.backend != "redis":
        return None
    assert config.bus.url is not None, "the config's validation requires a URL for the redis backend"
    return RedisState(config.bus.url, config.bus.prefix)
