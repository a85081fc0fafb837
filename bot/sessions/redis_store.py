"""Sessions on the redis backend: a list of JSON records and a hash of totals per session; cached tails checked per use.

Consecutive turns of one session may run on different workers, so a cached session is checked
against Redis (its length and generation) in the same round trip that fetches what it lacks:
nothing when it is current, the messages appended elsewhere since, or the tail when it is far
behind or the session was reset. Calls are synchronous (one local round trip each), like the
file store's appends, because the agent loop calls the store synchronously.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

from bot.bus import new_id
from bot.cluster.redis import RedisState, zset_scored
from bot.sessions.archive import ArchivedSession, summarise
from bot.sessions.cache import DEFAULT_MAX_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_TAIL, SessionCache
from bot.sessions.session import Session
from bot.storage.compact_json import dumps

logger = logging.getLogger(__name__)

# KEYS: meta hash, log list. ARGV: tail, cached generation, cached total (-1: nothing cached).
# Returns the hash's fields, the log's length, where the returned records start, the records.
_LOAD = """
local meta = redis.call('HGETALL', KEYS[1])
local total = redis.call('LLEN', KEYS[2])
local gen = redis.call('HGET', KEYS[1], 'gen') or ''
local tail = tonumber(ARGV[1])
local cached = tonumber(ARGV[3])
local from = math.max(0, total - tail)
if gen == ARGV[2] and cached >= 0 and cached <= total and total - cached <= tail then
  from = cached
end
if from >= total then
  return {meta, total, from, {}}
end
return {meta, total, from, redis.call('LRANGE', KEYS[2], from, -1)}
"""

# KEYS: meta hash, log list, the live meta hash of its session. ARGV: upto, the generation the session was read at.
# Raises the consolidation mark, never lowers it. A session whose keys now hold another generation (archived or
# reset by another process) is marked only where another process resumed it: the live keys, whose meta names the
# archive it came from; else nowhere (no mark on keys nothing reads, or on another conversation).
# Returns the mark (-1 when none was kept), the meta hash it is on and that hash's generation.
_CONSOLIDATED = """
local meta = KEYS[1]
if redis.call('EXISTS', KEYS[2]) == 0 or (redis.call('HGET', meta, 'gen') or '') ~= ARGV[2] then
  if redis.call('HGET', KEYS[3], 'resumed_from') ~= KEYS[1] then return {-1, '', ''} end
  meta = KEYS[3]
end
local mark = tonumber(redis.call('HGET', meta, 'consolidated') or '0')
if tonumber(ARGV[1]) > mark then
  mark = tonumber(ARGV[1])
  redis.call('HSET', meta, 'consolidated', mark)
end
return {mark, meta, redis.call('HGET', meta, 'gen') or ''}
"""

# KEYS: meta hash, log list, index (or ''). ARGV: now, session key, then the records.
# Appends the records, notes the activity (in the index only for a live session); returns the log's length.
_APPEND = """
local length = 0
for i = 3, #ARGV, 1000 do  -- in slices: unpack has a limit on how many values it returns
  length = redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', KEYS[1], 'updated', ARGV[1])
if KEYS[3] ~= '' then redis.call('ZADD', KEYS[3], ARGV[1], ARGV[2]) end
return length
"""

# KEYS: meta hash. ARGV: prompt tokens, completion tokens. Adds one call's tokens; returns the new totals.
_USAGE = """
return {redis.call('HINCRBY', KEYS[1], 'prompt', ARGV[1]), redis.call('HINCRBY', KEYS[1], 'completion', ARGV[2])}
"""

# KEYS: live meta, live log, archived meta, archived log, index. ARGV: new generation, session key.
_RESET = """
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[4]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[3]) end
redis.call('HSET', KEYS[1], 'gen', ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[2])
return 1
"""

# KEYS: archived meta, archived log, live meta, live log, index. ARGV: new generation, session key, now.
# Makes an archive the live session (the live one was archived just before), noting its length as where it was
# resumed; 0 when the archive is gone.
_RESUME = """
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('RENAME', KEYS[2], KEYS[4])
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('RENAME', KEYS[1], KEYS[3]) else redis.call('DEL', KEYS[3]) end
redis.call('HSET', KEYS[3], 'gen', ARGV[1], 'resumed', redis.call('LLEN', KEYS[4]), 'resumed_from', KEYS[1])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[2])
return 1
"""


@dataclass
class RedisSession(Session):
    """A session with the Redis keys it lives in (an archived one keeps its own) and the generation it was read at."""

    meta_key: str = ""
    log_key: str = ""
    gen: str = ""


class RedisSessionStore(SessionCache):
    """Sessions in Redis: any worker may run a session's next turn and sees every message before it."""

    def __init__(
        self,
        shared: RedisState,
        tail: int = DEFAULT_TAIL,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        super().__init__(tail, max_sessions, max_bytes)
        self._shared = shared
        self._index = shared.key("sessions")
        self._load_script = shared.script(_LOAD)
        self._append_script = shared.script(_APPEND)
        self._usage_script = shared.script(_USAGE)
        self._consolidated_script = shared.script(_CONSOLIDATED)
        self._reset_script = shared.script(_RESET)
        self._resume_script = shared.script(_RESUME)

    def get(self, key: str) -> Session:
        """The session, its cached copy brought up to date (or its tail read) in one round trip."""
        cached = self._lookup(key)
        session = cached if isinstance(cached, RedisSession) else self._new(key)
        known = session.total if cached is not None else -1
        meta, total, start, raw = self._load_script(
            keys=[session.meta_key, session.log_key], args=[self._tail, session.gen, known]
        )
        fields = dict(zip(meta[::2], meta[1::2], strict=True))
        records = [json.loads(r) for r in raw]
        size = sum(len(r) for r in raw)
        if cached is not None and int(start) == known and fields.get("gen", "") == session.gen:
            self._extend(session, records)
            self._grow(session, size)
        else:
            session = self._new(key, fields.get("gen", ""))
            session.base, session.size = int(total) - len(records), size
            self._extend(session, records)
            self._remember(session)
        session.prompt_tokens = int(fields.get("prompt", 0))
        session.completion_tokens = int(fields.get("completion", 0))
        session.consolidated = max(session.consolidated, int(fields.get("consolidated", 0)))
        session.resumed = int(fields["resumed"]) if "resumed" in fields else None
        self._trim(session)
        return session

    async def load(self, key: str) -> Session:
        """`get`: one round trip reads only the tail, whatever the session's length."""
        return self.get(key)

    def recent(self, key: str, limit: int) -> list[dict[str, Any]]:
        """The session's last `limit` messages, read from Redis (another worker may have added some)."""
        raw = self._shared.client.lrange(self._shared.key("session", key, "log"), -limit, -1)
        return [json.loads(r)["message"] for r in raw]

    def append(
        self,
        session: Session,
        messages: list[dict[str, Any]],
        inbound_ids: list[str] | None = None,
        usage: tuple[int, int] | None = None,
    ) -> None:
        """Append messages to the session's list in one script; `inbound_ids` names the bus messages they hold.

        `usage` (prompt and completion tokens of the call that wrote them) is added to the totals first.
        """
        if usage:
            self.record_usage(session, *usage)
        session = self._redis(session)
        if not messages:
            return  # RPUSH needs at least one value
        now = time.time()
        records: list[dict[str, Any]] = [{"ts": now, "message": m} for m in messages]
        if inbound_ids:
            records[0]["inbound"] = inbound_ids
            session.inbound_ids.update(inbound_ids)
        raw = [dumps(r) for r in records]
        index = self._index if session.meta_key == self._meta(session.key) else ""
        keys = [session.meta_key, session.log_key, index]
        length = self._append_script(keys=keys, args=[now, session.key, *raw])
        expected = session.total + len(messages)
        session.messages.extend(messages)
        self._grow(session, sum(len(r) for r in raw))
        if length != expected:
            logger.warning("[%s] session had %d messages, not %d: read again", session.key, length, expected)
            self._forget(session)
        self._trim(session)

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one LLM call's token counts to the session's totals in Redis (sent with the turn's next write)."""
        found = self._redis(session)
        found.prompt_tokens += prompt_tokens
        found.completion_tokens += completion_tokens

        def totals(reply: list[int]) -> None:
            found.prompt_tokens, found.completion_tokens = (int(total) for total in reply)

        self._usage_script.defer(keys=[found.meta_key], args=[prompt_tokens, completion_tokens], on_reply=totals)

    def mark_consolidated(self, session: Session, upto: int) -> None:
        """Record that messages before `upto` now live in long-term memory (a mark only ever rises)."""
        session = self._redis(session)
        keys = [session.meta_key, session.log_key, self._meta(session.key)]
        mark, meta, gen = (_text(part) for part in self._consolidated_script(keys=keys, args=[upto, session.gen]))
        if int(mark) < 0:
            logger.info("[%s] session archived or resumed elsewhere while consolidated: mark not kept", session.key)
        elif meta != session.meta_key:  # another process resumed the archive: its keys are the live ones now
            logger.info("[%s] archive resumed elsewhere while it was consolidated: marked live", session.key)
            self._moved(session, meta, self._shared.key("session", session.key, "log"), gen)
        session.consolidated = max(int(mark), upto)
        current = self._sessions.get(session.key)
        if isinstance(current, RedisSession) and current is not session and current.meta_key == session.meta_key:
            current.consolidated = max(current.consolidated, session.consolidated)
        self._trim(session)

    def sync_consolidated(self, session: Session) -> None:
        """Take up a consolidation mark another worker wrote meanwhile."""
        session = self._redis(session)
        mark = self._shared.client.hget(session.meta_key, "consolidated")
        session.consolidated = max(session.consolidated, int(mark or 0))

    async def load_unconsolidated(self, session: Session) -> None:
        """Read back (in a thread) the unconsolidated messages older than the cached ones, for consolidation."""
        session = self._redis(session)
        await asyncio.to_thread(self.sync_consolidated, session)
        if session.consolidated >= session.base:
            return
        raw = await asyncio.to_thread(
            self._shared.client.lrange, session.log_key, session.consolidated, session.base - 1
        )
        session.messages[:0] = [json.loads(r)["message"] for r in raw]
        session.base -= len(raw)
        self._grow(session, sum(len(r) for r in raw))

    def reset(self, key: str) -> Session:
        """Archive the session's keys and start a fresh generation; return the archived session."""
        old = self._redis(self.get(key))
        gen = new_id()
        archive = f"{key}.{time.strftime('%Y%m%dT%H%M%S')}.{gen[:8]}"
        archived_meta = self._shared.key("session-archive", archive, "meta")
        archived_log = self._shared.key("session-archive", archive, "log")
        keys = [old.meta_key, old.log_key, archived_meta, archived_log, self._index]
        self._reset_script(keys=keys, args=[gen, key])
        for copy in self._copies(lambda session: getattr(session, "meta_key", None) == old.meta_key):
            self._moved(copy, archived_meta, archived_log)  # a consolidation still running marks the archive
        self._remember(self._new(key, gen))
        return old

    def archives(self, key: str) -> list[ArchivedSession]:
        """The session's archives (each read whole: call it off the event loop), most recently active first."""
        client = self._shared.client
        prefix, suffix = self._shared.key("session-archive", key + "."), ":log"
        found = []
        for name in client.scan_iter(match=self._shared.key("session-archive", glob_escaped(key) + ".*", "log")):
            name = name.decode() if isinstance(name, bytes) else str(name)
            archive_id = name.removeprefix(prefix).removesuffix(suffix)
            if archive_id.count(".") != 1:  # a thread's archive, or another chat whose id continues this one's
                continue
            raw = client.lrange(name, 0, -1)
            updated = client.hget(self._shared.key("session-archive", key + "." + archive_id, "meta"), "updated")
            records = [json.loads(r) for r in raw]
            found.append(summarise(archive_id, records, sum(len(r) for r in raw), float(updated or 0)))
        return sorted(found, key=lambda archive: archive.last_active, reverse=True)

    def resume(self, key: str, archive_id: str) -> Session:
        """Rename the archive's keys back to the live ones, after archiving the live session."""
        archive = f"{key}.{archive_id}"
        meta, log = (self._shared.key("session-archive", archive, part) for part in ("meta", "log"))
        if archive_id.count(".") != 1 or not self._shared.client.exists(log):
            raise KeyError(archive_id)
        returning = self._copies(lambda session: getattr(session, "meta_key", None) == meta)
        old = self.reset(key)
        live = self._new(key)
        gen = new_id()
        if not self._resume_script(
            keys=[meta, log, live.meta_key, live.log_key, self._index], args=[gen, key, time.time()]
        ):
            raise KeyError(archive_id)  # another process resumed it meanwhile
        for copy in returning:  # the archive's consolidation, if still running, marks the live keys now
            self._moved(copy, live.meta_key, live.log_key, gen)
        cached = self._lookup(key)
        if cached is not None:
            self._forget(cached)
        return old

    def summaries(self, since: float) -> list[dict[str, Any]]:
        """Each live session active since `since`: key, last activity and message count."""
        client = self._shared.client
        active = zset_scored(client.zrangebyscore(self._index, since, "+inf", withscores=True))
        pipe = client.pipeline(transaction=False)
        for key, _ in active:
            pipe.llen(self._shared.key("session", key, "log"))
        counts = pipe.execute()
        return [
            {"key": key, "last_activity": when, "messages": count}
            for (key, when), count in zip(active, counts, strict=True)
        ]

    def _new(self, key: str, gen: str = "") -> RedisSession:
        return RedisSession(key=key, meta_key=self._meta(key), log_key=self._shared.key("session", key, "log"), gen=gen)

    def _meta(self, key: str) -> str:
        return self._shared.key("session", key, "meta")

    @staticmethod
    def _moved(session: Session, meta_key: str, log_key: str, gen: str | None = None) -> None:
        """Point a copy at the keys its session now lives in; `gen` when the move gave the session a new one."""
        found = RedisSessionStore._redis(session)
        found.meta_key, found.log_key = meta_key, log_key
        if gen is not None:
            found.gen = gen

    @staticmethod
    def _redis(session: Session) -> RedisSession:
        if not isinstance(session, RedisSession):
            raise TypeError(f"session {session.key} was not read from Redis")
        return session

    @staticmethod
    def _extend(session: RedisSession, records: list[dict[str, Any]]) -> None:
        session.messages.extend(r["message"] for r in records)
        for record in records:
            session.inbound_ids.update(record.get("inbound", ()))


def _text(value: bytes | str | int) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def glob_escaped(text: str) -> str:
    """`text` with Redis glob characters escaped, for a SCAN MATCH pattern."""
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)
