"""One memory scope's search index in Redis, the twin of `store.MemoryIndex` for processes that share a Redis and
no disk: the same passages, read marks and results, kept in plain Redis structures (no RediSearch).

Keys under `<prefix>:memory-index:{<scope>}` (one hash slot per scope): `p:<id>` hashes of passages; `t:<term>`
postings (passage id -> occurrences in what was asked and answered) of FTS5's own terms (`fts_terms`); `terms`
(every term, for prefixes); `meta` (id -> length and time); `ids`; `stats` (passages, tokens); `x:<session>\\n<log>`
(a log's exchanges by first message); `kind:<kind>` (entries, facts); `logs` and `marks` (how far each source was
read); `vec…` (their vectors, deleted with them: `vectors`). Each write is one MULTI under WATCH: no exchange twice.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState, zset_members
from bot.memory.index.fts_terms import Terms, Tokenizer
from bot.memory.index.passages import ExchangePart, KeptPassages, Passage
from bot.memory.index.redis import search as redis_search
from bot.memory.index.redis.search import FIELDS, Keys, log_field, posting, stored
from bot.memory.index.redis.vectors import DROPS, KEPT, RedisVectors, forgetting
from bot.memory.index.store import IndexUnusable, StoredPassage
from bot.sessions.logs import Cursor
from bot.sessions.redis_store import glob_escaped

if TYPE_CHECKING:
    import redis
    from redis.client import Pipeline

logger = logging.getLogger(__name__)

SCHEMA_VERSION = "1"
_TOKENIZER = Tokenizer()  # one for the process: it is a small in-memory table
Batch = list[list[str]]  # commands to run as one script, in order
# A batch's commands run in order; their keys are the scope's, in its hash slot. POST and UNPOST add and remove a
# passage's postings (and note its terms), so a passage's terms go as one list.
APPLY = """
local terms = KEYS[1] .. ':terms'
for _, command in ipairs(cjson.decode(ARGV[1])) do
  local name = command[1]
  if name == 'POST' or name == 'UNPOST' then -- POST id term posting term posting…; UNPOST id term term…
    local id, step = command[2], name == 'POST' and 2 or 1
    for i = 3, #command, step do
      if step == 2 then
        redis.call('HSET', KEYS[1] .. ':t:' .. command[i], id, command[i + 1])
        redis.call('ZADD', terms, 0, command[i])
      else
        redis.call('HDEL', KEYS[1] .. ':t:' .. command[i], id)
      end
    end
  else
    redis.call(unpack(command))
  end
end
"""


class RedisIndexes:
    """Each scope's index in the bot's Redis (`IndexHome`), shared by every process of the cluster."""

    def __init__(self, shared: RedisState) -> None:
        self._shared = shared

    def open(self, scope: str, path: Path) -> RedisIndex:
        return RedisIndex.open(self._shared, scope, path)

    def exists(self, scope: str, path: Path) -> bool:
        return bool(self._shared.client.exists(RedisIndex(self._shared, scope, path).keys("version")))

    def delete(self, scope: str, path: Path) -> None:
        index = RedisIndex(self._shared, scope, path)
        index.clear()
        self._shared.client.delete(index.keys("version"))

    def vectors(self, scope: str, path: Path, model: str) -> RedisVectors:
        return RedisVectors(self._shared, RedisIndex(self._shared, scope, path).keys, model)


class RedisIndex:
    """The passages of one scope in Redis, searched by BM25 as the SQLite index ranks them (`store.MemoryIndex`)."""

    def __init__(self, shared: RedisState, scope: str, path: Path) -> None:
        self._shared = shared
        self.path = path  # where the SQLite index would be: what the scope is known by
        self.keys = Keys(shared.key("memory-index", "{" + scope + "}"))  # one hash slot: a MULTI spans its keys
        self._logs: dict[str, dict[str, tuple[Cursor, bool, int | None]]] | None = None
        self._marks: dict[str, str] | None = None
        self._written = ""  # the scope's write counter when the read marks were read
        self._read = KeptPassages()  # passages searches read, and their neighbours, until anything is written
        self._top: int | None = None  # the highest passage id, likewise

    @classmethod
    def open(cls, shared: RedisState, scope: str, path: Path) -> RedisIndex:
        """The scope's index; IndexUnusable when Redis holds one of another version."""
        index = cls(shared, scope, path)
        version = shared.client.set(index.keys("version"), SCHEMA_VERSION, nx=True, get=True)
        if isinstance(version, bytes | str) and (found := as_text(version)) != SCHEMA_VERSION:
            raise IndexUnusable(f"index version {found}, this relaybot uses {SCHEMA_VERSION}")
        return index

    def close(self) -> None:
        """Nothing to let go of: the connection is the process's."""

    def refresh(self) -> None:
        """Start a use of the index: read marks kept in memory are dropped if any process wrote since."""
        written = as_text(self._client.get(self.keys("written")) or "")
        if written != self._written:
            self._written = written
            self._logs = self._marks = self._top = None
            self._read.forget()

    def cursors(self, session: str) -> dict[str, tuple[Cursor, bool]]:
        """Each known log of the session: how far it was read, and whether it is the live one."""
        return {log: (cursor, live) for log, (cursor, live, _) in self._read_logs().get(session, {}).items()}

    def live_logs(self, chat: str) -> list[tuple[str, str, int]]:
        """(session, live log, messages read) of the session `chat` and of its threads (`chat:…`)."""
        thread = chat + ":"
        return [
            (session, log, cursor.count)
            for session, logs in self._read_logs().items()
            if session == chat or session.startswith(thread)
            for log, (cursor, live, _) in logs.items()
            if live
        ]

    def add_exchanges(
        self, session: str, parts: Sequence[ExchangePart], start: Cursor, end: Cursor, live: bool
    ) -> bool:
        """Store exchanges read from one log between two cursors, with the new cursor, at once; False (and nothing
        stored) when the log's stored cursor is no longer `start`: another process got there first."""
        field = log_field(session, end.log)
        terms = _TOKENIZER.passages([(p.asked, "\n".join(p.replies)) for p in parts])

        def write(pipe: Pipeline, batch: Batch) -> bool:
            logs = {as_text(name): _log_value(value) for name, value in pipe.hgetall(self.keys("logs")).items()}
            offset, _, _, open_id = logs.get(field, (0, 0, False, None))
            if offset != start.offset:
                return False
            next_id = _next_id(pipe, self.keys)
            todo = list(zip(parts, terms, strict=True))
            extended = None  # the open exchange a reply read now belongs to, as stored
            if todo and not todo[0][0].opens and open_id is not None:
                extended = _passage(pipe, self.keys, open_id)
            pipe.multi()
            if extended is not None and open_id is not None:
                if extended.kind:  # (gone only if the index was cleared meanwhile)
                    _extend(batch, self.keys, open_id, extended, "\n".join(todo[0][0].replies))
                todo = todo[1:]
            for part, found in todo:
                reply = "\n".join(part.replies)
                passage = Passage("exchange", part.ts, part.speaker, part.asked, reply, part.first)
                _insert(batch, self.keys, next_id, session, end.log, passage, found)
                open_id, next_id = next_id, next_id + 1
            if live:  # the session's other logs are archived now
                for name, (was_offset, count, was_live, was_open) in logs.items():
                    other = name.split("\n", 1)
                    if was_live and other[0] == session and other[1] != end.log:
                        batch.append(["HSET", self.keys("logs"), name, _log_text(was_offset, count, False, was_open)])
            batch.append(["HSET", self.keys("logs"), field, _log_text(end.offset, end.count, live, open_id)])
            return True

        return self._transaction([self.keys("logs"), self.keys("ids")], write)

    def mark_archived(self, session: str, log: str) -> None:
        """Note that a log is no longer the session's live one."""
        field = log_field(session, log)

        def write(pipe: Pipeline, batch: Batch) -> bool:
            stored = pipe.hget(self.keys("logs"), field)
            if stored is None:
                return False
            offset, count, _, open_id = _log_value(stored)
            pipe.multi()
            batch.append(["HSET", self.keys("logs"), field, _log_text(offset, count, False, open_id)])
            return True

        self._transaction([self.keys("logs")], write)

    def drop_log(self, session: str, log: str) -> None:
        """Forget a log that no longer exists, with its passages."""

        def write(pipe: Pipeline, batch: Batch) -> bool:
            ids = [int(rowid) for rowid in zset_members(pipe.zrange(self.keys("x", log_field(session, log)), 0, -1))]
            gone = [(rowid, _passage(pipe, self.keys, rowid)) for rowid in ids]
            pipe.multi()
            for rowid, passage in gone:
                _delete(batch, self.keys, rowid, session, log, passage)
            batch.append(["HDEL", self.keys("logs"), log_field(session, log)])
            return True

        self._transaction([self.keys("logs"), self.keys("ids")], write)

    def mark(self, name: str) -> str:
        """A source's read mark (HISTORY.md's offset, MEMORY.md's stamp); "" when none."""
        if self._marks is None:
            self._marks = {as_text(k): as_text(v) for k, v in self._client.hgetall(self.keys("marks")).items()}
        return self._marks.get(name, "")

    def add_entries(
        self, passages: Iterable[Passage], mark: str, was: str, value: str, replace: str | None = None
    ) -> None:
        """Store passages and a source's new mark at once, if its mark is still `was` (else another process stored
        them); `replace` drops that kind's passages first."""
        added = list(passages)
        terms = _TOKENIZER.passages([(p.asked, p.answered) for p in added])

        def write(pipe: Pipeline, batch: Batch) -> bool:
            if as_text(pipe.hget(self.keys("marks"), mark) or "") != was:
                return False
            dropped = []
            if replace is not None:
                ids = [int(rowid) for rowid in pipe.smembers(self.keys("kind", replace))]
                dropped = [(rowid, _passage(pipe, self.keys, rowid)) for rowid in ids]
            next_id = _next_id(pipe, self.keys, {rowid for rowid, _ in dropped})
            pipe.multi()
            for rowid, passage in dropped:
                _delete(batch, self.keys, rowid, "", "", passage)
            for n, (passage, found) in enumerate(zip(added, terms, strict=True)):
                _insert(batch, self.keys, next_id + n, "", "", passage, found)
            batch.append(["HSET", self.keys("marks"), mark, value])
            return True

        self._transaction([self.keys("marks"), self.keys("ids")], write)

    def keyword(
        self,
        expression: str,
        limit: int,
        since: float | None,
        until: float | None,
        leave_out: Sequence[tuple[str, str, int]] = (),
    ) -> list[tuple[int, float, float, str, str]]:
        """The best `limit` passages matching an FTS5-style expression (`"word"` and `"root"*` terms joined by OR),
        as (id, BM25 score (higher better), time, asked, answered), best first, as the SQLite index ranks them. The
        passages come with them, and are kept for `passages`."""
        found = redis_search.keyword(self._client, self.keys, _TOKENIZER, expression, limit, since, until, leave_out)
        read = {each.id: each for _, each in found}
        self._read.passages(read, lambda missing: (read[rowid] for rowid in missing))
        return [row for row, _ in found]

    def matching(self, expressions: Sequence[str]) -> tuple[list[int], int]:
        """How many passages match each expression, and the highest passage id (about how many there are); with no
        expression and nothing written since, the id last read."""
        if expressions or self._top is None:
            counts, self._top = redis_search.matching(self._client, self.keys, _TOKENIZER, expressions)
            return counts, self._top
        return [], self._top

    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]:
        """The stored passages with these ids, by id (as SQLite gives them: callers read them in that order); those
        kept from an earlier read are not read again."""
        return self._read.passages(ids, self._read_passages)

    def around(self, found: Sequence[StoredPassage], before: int, after: int) -> list[list[StoredPassage]]:
        """Each passage with up to `before` and `after` exchanges of its log around it, in order: those not kept
        from an earlier read in one round trip."""
        wanted = [each for each in found if not self._read.holds_around(each, before, after)]
        read = dict(zip(wanted, redis_search.around(self._client, self.keys, wanted, before, after), strict=True))

        def neighbours(each: StoredPassage) -> tuple[list[StoredPassage], list[StoredPassage]]:
            return read.get(each) or redis_search.around(self._client, self.keys, [each], before, after)[0]

        return [self._read.around(each, before, after, partial(neighbours, each)) for each in found]

    def clear(self) -> None:
        """Forget every passage and read mark, so the next catch-up reads every source again."""
        kept = {self.keys("version"), self.keys("written"), *(self.keys(name) for name in KEPT)}
        client = self._client
        names = [name for name in client.scan_iter(match=glob_escaped(self.keys.base) + ":*", count=1000)]
        for start in range(0, len(names), 500):
            client.delete(*(name for name in names[start : start + 500] if name not in kept))
        client.incr(self.keys("written"))
        client.incr(self.keys(DROPS))  # the passages' vectors went too
        self._logs = self._marks = self._top = None
        self._read.forget()

    def size(self) -> int:
        """How many passages the index holds."""
        return int(self._client.zcard(self.keys("ids")))

    @property
    def _client(self) -> redis.Redis:
        return self._shared.client

    def _read_passages(self, ids: list[int]) -> list[StoredPassage]:
        pipe = self._client.pipeline(transaction=False)
        for rowid in ids:
            pipe.hmget(self.keys.passage(rowid), FIELDS)
        return [stored(rowid, values) for rowid, values in zip(ids, pipe.execute(), strict=True) if values[0]]

    def _read_logs(self) -> dict[str, dict[str, tuple[Cursor, bool, int | None]]]:
        if self._logs is None:
            self._logs = {}
            for field, value in self._client.hgetall(self.keys("logs")).items():
                session, log = as_text(field).split("\n", 1)
                offset, count, live, open_id = _log_value(value)
                self._logs.setdefault(session, {})[log] = (Cursor(log, offset, count), live, open_id)
        return self._logs

    def _transaction(self, watched: list[str], write: Callable[[Pipeline, Batch], bool]) -> bool:
        """Run `write` under WATCH until no other process wrote between: it reads, calls `multi()` and gives its writes
        to the batch, sent as one script (redis-py packs each command slowly), the read marks last."""
        from redis.exceptions import WatchError

        with self._client.pipeline() as pipe:
            while True:
                batch: Batch = []
                try:
                    pipe.watch(*watched)
                    if not write(pipe, batch):
                        pipe.reset()
                        return False
                    if batch:  # EVAL, not EVALSHA: a script missing inside MULTI would fail alone, the rest applied
                        pipe.eval(APPLY, 1, self.keys.base, json.dumps(batch, ensure_ascii=False))
                    pipe.incr(self.keys("written"))
                    pipe.execute()
                    return True
                except WatchError:
                    continue
                finally:
                    self._logs = self._marks = self._top = None
                    self._read.forget()


def _next_id(pipe: Pipeline, keys: Keys, dropped: Collection[int] = ()) -> int:
    """The id SQLite would give the next passage: one above the highest of those kept."""
    top = [int(rowid) for rowid in zset_members(pipe.zrevrange(keys("ids"), 0, len(dropped)))]
    return next((rowid for rowid in top if rowid not in dropped), 0) + 1


def _passage(pipe: Pipeline, keys: Keys, rowid: int) -> Passage:
    """A stored passage read under WATCH (kind "" when it is gone)."""
    values = pipe.hmget(keys.passage(rowid), FIELDS)
    return stored(rowid, values).passage if values[0] else Passage("", 0.0, "", "")


def _insert(batch: Batch, keys: Keys, rowid: int, session: str, log: str, passage: Passage, terms: Terms) -> None:
    """The writes that store a passage under `rowid`."""
    p = passage
    values = (p.kind, session, log, p.first, repr(p.ts), p.speaker, p.asked, p.answered)
    batch.append(["HSET", keys.passage(rowid), *(str(v) for pair in zip(FIELDS, values, strict=True) for v in pair)])
    _index(batch, keys, rowid, terms, p.ts)
    if p.kind == "exchange":
        batch.append(["ZADD", keys("x", log_field(session, log)), str(p.first), str(rowid)])
    else:
        batch.append(["SADD", keys("kind", p.kind), str(rowid)])


def _index(batch: Batch, keys: Keys, rowid: int, terms: Terms, ts: float) -> None:
    batch.append(["POST", str(rowid), *(v for term, counts in terms.counts.items() for v in (term, posting(counts)))])
    batch.append(["HSET", keys("meta"), str(rowid), f"{terms.length} {ts!r}"])
    batch.append(["ZADD", keys("ids"), str(rowid), str(rowid)])
    batch.append(["HINCRBY", keys("stats"), "rows", "1"])
    batch.append(["HINCRBY", keys("stats"), "tokens", str(terms.length)])


def _unindex(batch: Batch, keys: Keys, rowid: int, passage: Passage) -> None:
    [terms] = _TOKENIZER.passages([(passage.asked, passage.answered)])
    batch.append(["UNPOST", str(rowid), *terms.counts])
    batch.append(["HDEL", keys("meta"), str(rowid)])
    batch.append(["ZREM", keys("ids"), str(rowid)])
    batch.append(["HINCRBY", keys("stats"), "rows", "-1"])
    batch.append(["HINCRBY", keys("stats"), "tokens", str(-terms.length)])


def _delete(batch: Batch, keys: Keys, rowid: int, session: str, log: str, passage: Passage) -> None:
    if not passage.kind:
        return
    _unindex(batch, keys, rowid, passage)
    batch.append(["DEL", keys.passage(rowid)])
    batch.extend(forgetting(keys, rowid))
    if passage.kind == "exchange":
        batch.append(["ZREM", keys("x", log_field(session, log)), str(rowid)])
    else:
        batch.append(["SREM", keys("kind", passage.kind), str(rowid)])


def _extend(batch: Batch, keys: Keys, rowid: int, was: Passage, reply: str) -> None:
    """Add a reply read later to an exchange: its terms are counted again."""
    answered = f"{was.answered}\n{reply}" if was.answered else reply
    _unindex(batch, keys, rowid, was)
    [terms] = _TOKENIZER.passages([(was.asked, answered)])
    batch.append(["HSET", keys.passage(rowid), "answered", answered])
    _index(batch, keys, rowid, terms, was.ts)


def _log_text(offset: int, count: int, live: bool, open_id: int | None) -> str:
    return f"{offset} {count} {int(live)} {'' if open_id is None else open_id}"


def _log_value(text: bytes | str) -> tuple[int, int, bool, int | None]:
    """(offset, messages read, live, open passage id) of a stored log cursor."""
    offset, count, live, open_id = as_text(text).split(" ")
    return int(offset), int(count), live == "1", int(open_id) if open_id else None
