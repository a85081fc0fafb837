"""Which sessions feed each memory scope on the redis backend: a set per scope, shared by every worker."""

from __future__ import annotations

from bot.cluster.redis import RedisState


class RedisMembers:
    """`<prefix>:memory-scope:<scope>` sets of session keys (`bot.memory.members.ScopeMembers`)."""

    def __init__(self, shared: RedisState) -> None:
        self._shared = shared

    def members(self, scope: str) -> list[str]:
        return sorted(_text(key) for key in self._shared.client.smembers(self._key(scope)))

    def add(self, scope: str, key: str) -> None:
        self._shared.client.sadd(self._key(scope), key)

    def scopes(self) -> list[str]:
        prefix = self._key("")
        found = self._shared.client.scan_iter(match=prefix + "*", count=500)
        return sorted(_text(name).removeprefix(prefix) for name in found)

    def _key(self, scope: str) -> str:
        return self._shared.key("memory-scope", scope)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
