"""The vectors of a scope's passages in the bus's Redis, the twin of `vectors.PassageVectors` for processes that share
a Redis and no disk: float32 rows in a hash beside the scope's index, each process reading only those stored since
its last look (one round trip, or a slice at a time when there are many), searched exactly in Python (plain Redis:
no search module).

Keys under the scope's index (`<prefix>:memory-index:{<scope>}`, its hash slot): `vec` (passage id -> time as float64,
then the unit vector), `vec:made` (id -> its reply's length in bytes when embedded: an exchange whose reply grew is
embedded again), `vec:seq` (id -> when stored, so a process reads only what is new), `vec:busy` (the process
embedding the scope now: the others leave it the work, so a passage is embedded once however many processes search)
and, kept by a reindex, `vec:next`, `vec:model` and `vec:drops` (passages the index dropped: their vectors go in the
same script, `forgetting`). Safe across threads: a lock serialises each store's calls.
"""

from __future__ import annotations

import struct
import threading
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.cluster.redis import RedisState
from bot.memory.index.redis.search import Keys
from bot.memory.index.vectors import Pending, VectorCopy, passage_text, unit_rows

if TYPE_CHECKING:
    from redis.typing import EncodableT

DROPS = "vec:drops"
KEPT = ("vec:next", "vec:model", DROPS)  # what a reindex keeps: vectors read before it must not look current
SLICE = 2000  # vectors read in one reply: 3 MB at 384 dimensions
LEASE_MS = 120_000  # how long the scope's embedding stays with a process that stopped calling (longer than a request)
_TIME = struct.Struct("<d")
# Which passages need a vector: open exchanges whose reply grew since (or that have none), then those above
# ARGV[1] without one, up to ARGV[3]; after drops (ARGV[2] is the count last seen) every id is looked at again.
# Returns the drops, the id below which every passage has a vector, and each passage's id, kind, time, texts and
# reply length. None while another process embeds the scope (`vec:busy`, ARGV[4] is the caller's token); the caller
# holds it for ARGV[5] ms while there is work, and lets it go when there is none.
PENDING = """
local base, checked, limit, busy = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[3]), KEYS[1] .. ':vec:busy'
local holder = redis.call('GET', busy)
if holder and holder ~= ARGV[4] then return {ARGV[2], ARGV[1], {}} end
local drops = redis.call('GET', base .. ':vec:drops') or '0'
if drops ~= ARGV[2] then checked = 0 end
local ids, seen = {}, {}
local function add(id)
  if not seen[id] then seen[id] = true; ids[#ids + 1] = id end
end
for _, value in ipairs(redis.call('HVALS', base .. ':logs')) do
  local open = string.match(value, ' (%d+)$')
  if open then
    local grown = tostring(redis.call('HSTRLEN', base .. ':p:' .. open, 'answered'))
    if redis.call('HGET', base .. ':vec:made', open) ~= grown then add(open) end
  end
end
local first, last, missing, after = nil, checked, 0, '(' .. checked
while missing < limit do
  local batch = redis.call('ZRANGEBYSCORE', base .. ':ids', after, '+inf', 'LIMIT', 0, 1000)
  for _, id in ipairs(batch) do
    if redis.call('HEXISTS', base .. ':vec', id) == 0 then
      first = first or tonumber(id)
      add(id)
      missing = missing + 1
      if missing == limit then break end
    end
    last = tonumber(id)
  end
  if #batch < 1000 then break end
  after = '(' .. batch[#batch]
end
local rows = {}
for _, id in ipairs(ids) do
  local p = base .. ':p:' .. id
  local kind, ts, asked, answered = unpack(redis.call('HMGET', p, 'kind', 'ts', 'asked', 'answered'))
  if kind then
    rows[#rows + 1] = {id, kind, ts, asked, answered, tostring(redis.call('HSTRLEN', p, 'answered'))}
  end
end
if #rows > 0 then redis.call('SET', busy, ARGV[4], 'PX', ARGV[5]) elseif holder then redis.call('DEL', busy) end
return {drops, tostring(first and first - 1 or last), rows}
"""
# Store vectors (ARGV: the model, the drops seen when they were picked, the caller's token and lease, then id, time,
# reply length and vector of each): after drops, only those whose passage is still there with the same time (its id
# may have been taken again). The caller's hold on the scope's embedding is renewed.
STORE = """
local base = KEYS[1]
if redis.call('GET', base .. ':vec:model') ~= ARGV[1] then return 0 end
if redis.call('GET', base .. ':vec:busy') == ARGV[3] then redis.call('PEXPIRE', base .. ':vec:busy', ARGV[4]) end
local same = (redis.call('GET', base .. ':vec:drops') or '0') == ARGV[2]
local stored = 0
for i = 5, #ARGV, 4 do
  local id = ARGV[i]
  if same or redis.call('HGET', base .. ':p:' .. id, 'ts') == ARGV[i + 1] then
    redis.call('HSET', base .. ':vec', id, ARGV[i + 3])
    redis.call('HSET', base .. ':vec:made', id, ARGV[i + 2])
    redis.call('ZADD', base .. ':vec:seq', redis.call('INCR', base .. ':vec:next'), id)
    stored = stored + 1
  end
end
return stored
"""
# Up to ARGV[3] vectors stored after sequence ARGV[1] (ids and sequences, vectors) and, when drops changed since
# ARGV[2], the ids stored up to it that are still there. A slice at a time, so that no reply holds Redis (and the bus)
# for long.
LOAD = """
local base = KEYS[1]
local drops = redis.call('GET', base .. ':vec:drops') or '0'
local kept = {}
if drops ~= ARGV[2] then kept = redis.call('ZRANGEBYSCORE', base .. ':vec:seq', '-inf', ARGV[1]) end
local new = redis.call('ZRANGEBYSCORE', base .. ':vec:seq', '(' .. ARGV[1], '+inf', 'WITHSCORES', 'LIMIT', 0, ARGV[3])
local ids = {}
for i = 1, #new, 2 do ids[#ids + 1] = new[i] end
local vectors = #ids > 0 and redis.call('HMGET', base .. ':vec', unpack(ids)) or {}
return {drops, kept, new, vectors}
"""
# The scope's vectors are this model's from now on: another model's are dropped.
ADOPT = """
local base = KEYS[1]
local was = redis.call('GET', base .. ':vec:model')
if was ~= ARGV[1] then
  if was then
    redis.call('DEL', base .. ':vec', base .. ':vec:made', base .. ':vec:seq')
    redis.call('INCR', base .. ':vec:drops')
  end
  redis.call('SET', base .. ':vec:model', ARGV[1])
end
"""


def forgetting(keys: Keys, rowid: int) -> list[list[str]]:
    """The writes that drop a passage's vector, sent with the passage's own deletion."""
    field = str(rowid)
    return [
        ["HDEL", keys("vec"), field],
        ["HDEL", keys("vec:made"), field],
        ["ZREM", keys("vec:seq"), field],
        ["INCR", keys(DROPS)],
    ]


class RedisVectors:
    """One scope's vectors in Redis for one model (`VectorStore`): which passages need one, storing them, and the
    nearest to a query, searched in an in-memory copy brought up to date before each search."""

    def __init__(self, shared: RedisState, keys: Keys, model: str) -> None:
        self._shared = shared
        self.keys = keys
        self._model = model
        self._lock = threading.Lock()
        self._token = uuid.uuid4().hex  # this store's name on the scope's `vec:busy`
        self._adopted = False
        self._checked = 0  # every passage up to this id has a vector, though maybe of a shorter reply
        self._picked = ""  # the drops when `pending` last looked; "" before
        self._made: dict[int, str] = {}  # reply lengths of the passages `pending` last gave
        self._copy = VectorCopy()
        self._loaded = 0  # the highest `vec:seq` in the copy
        self._read = ""  # the drops when the copy was last brought up to date

    def pending(self, limit: int) -> list[Pending]:
        """Up to `limit` passages without a vector of their current text, oldest first; none while another process
        embeds the scope (it goes on until none are left)."""
        with self._lock:
            self._adopt()
            args = (self._checked, self._picked or "-", limit, self._token, LEASE_MS)
            drops, checked, rows = self._shared.client.register_script(PENDING)(keys=[self.keys.base], args=args)
            self._picked, self._checked = drops, int(checked)
            picked = sorted((int(row[0]), row) for row in rows)[:limit]
            self._made = {rowid: row[5] for rowid, row in picked}
        return [Pending(rowid, float(row[2]), passage_text(row[1], row[3], row[4])) for rowid, row in picked]

    def store(self, passages: Sequence[Pending], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors (normalised, float32) of these passages, in one script."""
        args: list[EncodableT] = []
        with self._lock:
            self._adopt()
            for passage, row in zip(passages, unit_rows(vectors), strict=True):
                made = self._made.get(passage.id, "")
                args += [passage.id, repr(passage.ts), made, _TIME.pack(passage.ts) + row]
            script = self._shared.client.register_script(STORE)
            script(keys=[self.keys.base], args=[self._model, self._picked or "-", self._token, LEASE_MS, *args])

    def nearest(
        self, query: Sequence[float], limit: int, since: float | None, until: float | None, floor: float = -1.0
    ) -> list[int]:
        """The ids of the `limit` passages closest to `query` (cosine, at least `floor`) in [since, until), best
        first."""
        self.load()
        return self._copy.nearest(query, limit, since, until, floor)

    def load(self) -> None:
        """Bring the in-memory copy up to date: what was stored since, and what the index dropped."""
        with self._lock:
            self._adopt()
            ids: list[int] = []
            times: list[float] = []
            vectors: list[bytes] = []
            while True:
                drops, kept, new, read = self._raw(LOAD, self._loaded, self._read or "-", SLICE)
                if (drops := drops.decode()) != self._read:
                    self._add(ids, times, vectors)  # what this call read is older than the drops
                    ids, times, vectors = [], [], []
                    self._read = drops
                    self._copy.keep([int(rowid) for rowid in kept])
                if new:
                    self._loaded = int(new[-1])
                    ids += [int(rowid) for rowid in new[::2]]
                    times += [_TIME.unpack_from(vector)[0] for vector in read]
                    vectors += [vector[_TIME.size :] for vector in read]
                if len(new) < 2 * SLICE:
                    break
            self._add(ids, times, vectors)

    def close(self) -> None:
        """Let go of the in-memory copy (the connection is the process's)."""
        with self._lock:
            self._copy = VectorCopy()
            self._loaded = 0
            self._read = ""

    def _add(self, ids: list[int], times: list[float], vectors: list[bytes]) -> None:
        if ids:
            self._copy.add(ids, times, vectors)

    def _adopt(self) -> None:
        """Make the scope's vectors this model's, once."""
        if not self._adopted:
            self._shared.client.register_script(ADOPT)(keys=[self.keys.base], args=[self._model])
            self._adopted = True

    def _raw(self, source: str, *args: EncodableT) -> Any:
        """A script's reply as bytes (vectors are no text), from its cached copy on the server when it has one."""
        from redis.client import NEVER_DECODE
        from redis.exceptions import NoScriptError

        client = self._shared.client
        script = client.register_script(source)
        options = {NEVER_DECODE: True}
        try:
            return client.execute_command("EVALSHA", script.sha, 1, self.keys.base, *args, **options)
        except NoScriptError:
            return client.execute_command("EVAL", source, 1, self.keys.base, *args, **options)
