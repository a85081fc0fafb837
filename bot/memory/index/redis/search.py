"""Keyword search over a scope's Redis index: the postings of an expression's terms read in one round trip and
ranked by FTS5's BM25 in Python, with the SQLite index's filters and order (score, newest, session, first)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.bus.redis.connection import as_text
from bot.memory.index.fts_terms import Counts, Phrase, Tokenizer, bm25, frequency, idf, phrases
from bot.memory.index.passages import Passage
from bot.memory.index.store import StoredPassage

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT

Row = tuple[int, float, float, str, str]  # id, BM25 (higher better), time, asked, answered
FIELDS = ("kind", "session", "log", "first", "ts", "speaker", "asked", "answered")  # a passage's hash
BATCH = 64  # passages read at a time while the best are checked against `leave_out`


@dataclass(frozen=True, slots=True)
class Keys:
    """The key names of one scope's index."""

    base: str

    def __call__(self, *parts: str) -> str:
        return ":".join((self.base, *parts))

    def term(self, term: str) -> str:
        """The postings of a term: passage id -> "asked answered" occurrences."""
        return self("t", term)

    def passage(self, rowid: int) -> str:
        return self("p", str(rowid))


def posting(counts: Counts) -> str:
    """A term's occurrences in one passage as a posting keeps them."""
    return f"{counts[0]} {counts[1]}"


def _counts(value: str) -> Counts:
    asked, answered = value.split(" ")
    return int(asked), int(answered)


# One round trip for a search's postings: each phrase's terms (a prefix's looked up in `terms`) with their postings,
# the scope's counts, and the length and time of every passage found. Its keys share the scope's hash slot. HMGET in
# slices: Lua unpacks at most a few thousand arguments.
POSTINGS = """
local base, out, seen, ids = KEYS[1], {}, {}, {}
for i = 1, #ARGV do
  local kind, rest = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)
  local terms = {}
  if kind == 'p' then
    terms = redis.call('ZRANGEBYLEX', base .. ':terms', '[' .. rest, '(' .. rest .. '\\255')
  elseif rest ~= '' then
    for term in string.gmatch(rest, '[^\t]+') do terms[#terms + 1] = term end
  end
  local phrase = {}
  for _, term in ipairs(terms) do
    local flat = redis.call('HGETALL', base .. ':t:' .. term)
    phrase[#phrase + 1] = flat
    for j = 1, #flat, 2 do
      if not seen[flat[j]] then seen[flat[j]] = true; ids[#ids + 1] = flat[j] end
    end
  end
  out[#out + 1] = phrase
end
local meta = {}
for s = 1, #ids, 4000 do
  local slice = redis.call('HMGET', base .. ':meta', unpack(ids, s, math.min(s + 3999, #ids)))
  for _, value in ipairs(slice) do meta[#meta + 1] = value end
end
return {redis.call('HMGET', base .. ':stats', 'rows', 'tokens'), out, ids, meta}
"""


@dataclass(frozen=True, slots=True)
class Found:
    """Each phrase's passages with its occurrences there, the scope's passages and tokens, and the length and time
    of every passage found."""

    postings: list[dict[int, Counts]]
    rows: int
    tokens: int
    meta: dict[int, tuple[int, float]]


def phrase_postings(client: redis.Redis, keys: Keys, found: Sequence[Phrase]) -> Found:
    """Each phrase's passages with its occurrences there (a prefix's terms added up; a phrase of several tokens
    counted where all are, as often as its rarest: FTS5 would also want them adjacent), in one round trip."""
    args = list(map(_argument, found))
    stats, replies, ids, lengths = client.register_script(POSTINGS)(keys=[keys.base], args=args)
    postings = [_added(read) if phrase.prefix else _all_of(read) for phrase, read in zip(found, replies, strict=True)]
    kept = {}
    for rowid, value in zip(ids, lengths, strict=True):
        if value:  # (gone if deleted meanwhile)
            length, ts = value.split(" ")
            kept[int(rowid)] = (int(length), float(ts))
    return Found(postings, int(stats[0] or 0), int(stats[1] or 0), kept)


def _added(read: list[list[str]]) -> dict[int, Counts]:
    if len(read) == 1:
        return _pairs(read[0])
    total: dict[int, Counts] = {}
    for term in read:
        for rowid, (asked, answered) in _pairs(term).items():
            was = total.get(rowid, (0, 0))
            total[rowid] = (was[0] + asked, was[1] + answered)
    return total


def _all_of(read: list[list[str]]) -> dict[int, Counts]:
    if not read:
        return {}
    terms = [_pairs(term) for term in read]
    common = set(terms[0]).intersection(*terms[1:])
    return {rowid: min((term[rowid] for term in terms), key=sum) for rowid in common}


def _pairs(flat: list[str]) -> dict[int, Counts]:
    """A term's postings as HGETALL gives them flat: id, "asked answered", id, …"""
    return {int(flat[n]): _counts(flat[n + 1]) for n in range(0, len(flat), 2)}


def keyword(
    client: redis.Redis,
    keys: Keys,
    tokenizer: Tokenizer,
    expression: str,
    limit: int,
    since: float | None,
    until: float | None,
    leave_out: Sequence[tuple[str, str, int]] = (),
) -> list[Row]:
    """The best `limit` passages for an expression, as `store.MemoryIndex.keyword` finds and orders them."""
    found = phrase_postings(client, keys, phrases(expression, tokenizer))
    postings = found.postings
    average = found.tokens / found.rows if found.rows else 1.0
    weights = [idf(found.rows, len(hits)) for hits in postings]
    scored: list[tuple[float, float, int]] = []
    for rowid, (length, ts) in found.meta.items():
        if (since is not None and ts < since) or (until is not None and ts >= until):
            continue
        present = [(w, frequency(hits[rowid])) for w, hits in zip(weights, postings, strict=True) if rowid in hits]
        scored.append((bm25(present, length, average), ts, rowid))
    scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
    return _best(client, keys, scored, limit, leave_out)


def _best(
    client: redis.Redis,
    keys: Keys,
    scored: list[tuple[float, float, int]],
    limit: int,
    leave_out: Sequence[tuple[str, str, int]],
) -> list[Row]:
    """The first `limit` of the scored passages not left out, ties (same score and time) ordered by session and
    first message as the SQLite index orders them."""
    kept: list[tuple[float, float, str, int, Row]] = []
    fields = ("session", "log", "first", "asked", "answered")
    for start in range(0, len(scored), BATCH):
        batch = scored[start : start + BATCH]
        pipe = client.pipeline(transaction=False)
        for _, _, rowid in batch:
            pipe.hmget(keys.passage(rowid), fields)
        for (score, ts, rowid), (session, log, first, asked, answered) in zip(batch, pipe.execute(), strict=True):
            if session is None:
                continue
            if len(kept) >= limit and (score, ts) != kept[-1][:2]:
                return _ordered(kept, limit)
            if any(session == s and log == lg and int(first) >= n for s, lg, n in leave_out):
                continue
            kept.append((score, ts, session, int(first), (rowid, score, ts, asked, answered)))
    return _ordered(kept, limit)


def _ordered(kept: list[tuple[float, float, str, int, Row]], limit: int) -> list[Row]:
    kept.sort(key=lambda item: (-item[0], -item[1], item[2], item[3]))
    return [item[4] for item in kept[:limit]]


# How many passages match each group of phrases (ARGV[1]: the groups' sizes), counted where they are: a word's
# ids, not its postings, are all a count needs. A lone word's count is its postings' length; a phrase of several
# words counts where all are. Then the highest passage id.
COUNTS = """
local base, counts, at = KEYS[1], {}, 2
local function ids(phrase, seen, n)
  local kind, rest = string.sub(phrase, 1, 1), string.sub(phrase, 2)
  local terms = {}
  if kind == 'p' then
    terms = redis.call('ZRANGEBYLEX', base .. ':terms', '[' .. rest, '(' .. rest .. '\\255')
  else
    for term in string.gmatch(rest, '[^\\t]+') do terms[#terms + 1] = term end
    if #terms > 1 then
      for _, id in ipairs(redis.call('HKEYS', base .. ':t:' .. terms[1])) do
        local all = true
        for k = 2, #terms do all = all and redis.call('HEXISTS', base .. ':t:' .. terms[k], id) == 1 end
        if all and not seen[id] then seen[id] = true; n = n + 1 end
      end
      return n
    end
  end
  for _, term in ipairs(terms) do
    for _, id in ipairs(redis.call('HKEYS', base .. ':t:' .. term)) do
      if not seen[id] then seen[id] = true; n = n + 1 end
    end
  end
  return n
end
for size in string.gmatch(ARGV[1], '%d+') do
  size = tonumber(size)
  local rest = string.sub(ARGV[at], 2)
  if size == 1 and string.sub(ARGV[at], 1, 1) == 'e' and not string.find(rest, '\\t') then
    counts[#counts + 1] = rest == '' and 0 or redis.call('HLEN', base .. ':t:' .. rest)
  else
    local seen, n = {}, 0
    for k = at, at + size - 1 do n = ids(ARGV[k], seen, n) end
    counts[#counts + 1] = n
  end
  at = at + size
end
local top = redis.call('ZREVRANGE', base .. ':ids', 0, 0)
return {counts, top}
"""


def matching(
    client: redis.Redis, keys: Keys, tokenizer: Tokenizer, expressions: Sequence[str]
) -> tuple[list[int], int]:
    """How many passages match each expression, and the highest passage id, in one round trip."""
    parsed = [phrases(expression, tokenizer) for expression in expressions]
    args = [" ".join(str(len(each)) for each in parsed), *(_argument(p) for each in parsed for p in each)]
    counts, top = client.register_script(COUNTS)(keys=[keys.base], args=args)
    return [int(count) for count in counts], int(top[0]) if top else 0


def _argument(phrase: Phrase) -> str:
    """A phrase as the scripts take it: "p" and a prefix, or "e" and its tokens."""
    return f"p{phrase.tokens[0]}" if phrase.prefix and phrase.tokens else "e" + "\t".join(phrase.tokens)


# Passages' neighbours in their logs, read in one round trip: for each (log, first) of ARGV[4…], (id, fields…) of up
# to ARGV[1] exchanges before and ARGV[2] after it; ARGV[3] names the fields after the passages.
AROUND = """
local fields = {}
for i = 1, tonumber(ARGV[3]) do fields[i] = ARGV[3 + i] end
local function rows(ids)
  local found = {}
  for _, id in ipairs(ids) do
    local row = redis.call('HMGET', KEYS[1] .. ':p:' .. id, unpack(fields))
    if row[1] then table.insert(row, 1, id); found[#found + 1] = row end
  end
  return found
end
local out = {}
for i = 4 + #fields, #ARGV, 2 do
  local log, first = KEYS[1] .. ':x:' .. ARGV[i], ARGV[i + 1]
  local earlier = redis.call('ZREVRANGEBYSCORE', log, '(' .. first, '-inf', 'LIMIT', 0, ARGV[1])
  local later = redis.call('ZRANGEBYSCORE', log, '(' .. first, '+inf', 'LIMIT', 0, ARGV[2])
  out[#out + 1] = {rows(earlier), rows(later)}
end
return out
"""


def around(
    client: redis.Redis, keys: Keys, found: Sequence[StoredPassage], before: int, after: int
) -> list[list[StoredPassage]]:
    """Each passage with up to `before` and `after` exchanges of its log around it, in one round trip."""
    if not found:
        return []
    args: list[EncodableT] = [before, after, len(FIELDS), *FIELDS]
    for each in found:
        args += [log_field(each.session, each.log), each.passage.first]
    read = client.register_script(AROUND)(keys=[keys.base], args=args)
    return [
        [*(stored(int(r[0]), r[1:]) for r in reversed(earlier)), each, *(stored(int(r[0]), r[1:]) for r in later)]
        for each, (earlier, later) in zip(found, read, strict=True)
    ]


def log_field(session: str, log: str) -> str:
    """How a log is named in the index's keys and its `logs` hash."""
    return f"{session}\n{log}"


def stored(rowid: int, values: Sequence[bytes | str | None]) -> StoredPassage:
    """A passage from its hash's FIELDS."""
    kind, session, log, first, ts, speaker, asked, answered = (as_text(value or "") for value in values)
    return StoredPassage(rowid, session, log, Passage(kind, float(ts), speaker, asked, answered, int(first)))
