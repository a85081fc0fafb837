"""Reading session logs from a position on, for a worker's memory index: the redis store's lists.

A log's identity is its generation (the `gen` field of its meta hash, "" for a session's first),
which an archived log keeps because /new renames the meta hash with the list.
"""

from __future__ import annotations

import json

from bot.cluster.redis import RedisState
from bot.sessions.logs import Cursor, LogEntry, LogRead
from bot.sessions.redis_store import glob_escaped

PRUNED_KEY = "session-archive-pruned"  # counted up whenever retention deletes archives (indexes then look)


class RedisLogs:
    """The redis store's session lists, read with LRANGE from a message number on."""

    def __init__(self, shared: RedisState) -> None:
        self._shared = shared

    def live_heads(self, keys: list[str]) -> dict[str, Cursor]:
        pipe = self._shared.client.pipeline(transaction=False)
        for key in keys:
            pipe.hget(self._shared.key("session", key, "meta"), "gen")
            pipe.llen(self._shared.key("session", key, "log"))
        replies = pipe.execute()
        heads = {}
        for key, gen, length in zip(keys, replies[::2], replies[1::2], strict=True):
            if length:
                heads[key] = Cursor(_text(gen), int(length))
        return heads

    def archived(self, key: str) -> list[str]:
        return [gen for gen, _ in self._archived(key)]

    def read(self, key: str, since: Cursor, limit: int) -> LogRead:
        log = self._log_key(key, since.log)
        if log is None:
            return LogRead([], since, gone=True)
        raw = self._shared.client.lrange(log, since.offset, since.offset + limit - 1)
        entries = []
        for n, item in enumerate(raw, since.offset):
            record = json.loads(item)
            entries.append(LogEntry(n, float(record.get("ts") or 0.0), record["message"]))
        cursor = Cursor(since.log, since.offset + len(raw), since.count + len(raw))
        return LogRead(entries, cursor, done=len(raw) < limit)

    def backlog(self, key: str, since: Cursor) -> int:
        return 0  # read over the network: a thread waits on it without holding the GIL

    def pruned(self) -> str:
        return _text(self._shared.client.get(self._shared.key(PRUNED_KEY)))

    def _log_key(self, key: str, gen: str) -> str | None:
        """The list holding generation `gen` of the session: the live one, or its archive."""
        live = self._shared.key("session", key, "meta")
        if _text(self._shared.client.hget(live, "gen")) == gen:
            return self._shared.key("session", key, "log")
        name = dict(self._archived(key)).get(gen)  # looked up each time: /resume may have taken it back
        return None if name is None else self._shared.key("session-archive", name, "log")

    def _archived(self, key: str) -> list[tuple[str, str]]:
        """(generation, archive name) of each archive of exactly this session, oldest first."""
        client = self._shared.client
        prefix = self._shared.key("session-archive", "")
        names = []
        for found in client.scan_iter(match=self._shared.key("session-archive", glob_escaped(key) + ".*", "meta")):
            name = _text(found).removeprefix(prefix).removesuffix(":meta")
            if name.rsplit(".", 2)[0] == key:
                names.append(name)
        names.sort()
        pipe = client.pipeline(transaction=False)
        for name in names:
            pipe.hget(self._shared.key("session-archive", name, "meta"), "gen")
        return [(_text(gen), name) for gen, name in zip(pipe.execute(), names, strict=True)]


def _text(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)
