"""Keyword search over a scope's Redis index: an expression's postings ranked by FTS5's BM25 inside Redis, in one
round trip, with the SQLite index's filters and order (score, newest, session, first)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.bus.redis.connection import as_text
from bot.memory.index.fts_terms import ANSWER_WEIGHT, K1, B, Counts, Phrase, Tokenizer, phrases
from bot.memory.index.passages import Passage
from bot.memory.index.store import StoredPassage

if TYPE_CHECKING:
    import redis
    from redis.typing import EncodableT

Row = tuple[int, float, float, str, str]  # id, BM25 (higher better), time, asked, answered
FIELDS = ("kind", "session", "log", "first", "ts", "speaker", "asked", "answered")  # a passage's hash


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


# One round trip for a search, scored where the postings are (none of them cross the network): each phrase's
# passages with its occurrences there, from its terms' postings (a prefix's terms, looked up in `terms`, added up; a
# phrase of several tokens counted where all are, as often as its rarest: FTS5 would also want them adjacent); each
# passage's BM25 as FTS5's bm25() computes it, in the same float arithmetic and order; the passages sorted by score,
# newest, id; then, best first, those not left out until `limit` are kept (and any tied with the last), with their
# FIELDS. ARGV: limit, since, until ("" for none), k1, b, the answer's weight, the number of left-out ranges, the
# number of FIELDS and their names, (session, log, first) of each range, then the phrases. Scores and times go back as
# text: Redis would cut numbers to integers.
KEYWORD = """
local base, limit, since, till = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local k1, b, answer, ranges = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local fields, leave, at = {}, {}, 9 + tonumber(ARGV[8])
for f = 1, tonumber(ARGV[8]) do fields[f] = ARGV[8 + f] end
for r = 1, ranges do leave[r] = {ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2])}; at = at + 3 end
local reads = {}
local function read(term)  -- a term's postings as (id -> occurrences asked, id -> answered), read once
  local found = reads[term]
  if found then return found[1], found[2] end
  local flat, asked, answered = redis.call('HGETALL', base .. ':t:' .. term), {}, {}
  for j = 1, #flat, 2 do
    local id, value = flat[j], flat[j + 1]
    local space = string.find(value, ' ', 1, true)
    asked[id], answered[id] = tonumber(string.sub(value, 1, space - 1)), tonumber(string.sub(value, space + 1))
  end
  reads[term] = {asked, answered}
  return asked, answered
end
local phrases, sizes, ids, seen = {}, {}, {}, {}
for i = at, #ARGV do
  local kind, rest = string.sub(ARGV[i], 1, 1), string.sub(ARGV[i], 2)
  local asked, answered = {}, {}
  if kind == 'p' then
    local terms = redis.call('ZRANGEBYLEX', base .. ':terms', '[' .. rest, '(' .. rest .. '\\255')
    if #terms == 1 then asked, answered = read(terms[1]) end
    for t = 1, #terms > 1 and #terms or 0 do
      local asks, answers = read(terms[t])
      for id, n in pairs(asks) do
        asked[id], answered[id] = (asked[id] or 0) + n, (answered[id] or 0) + answers[id]
      end
    end
  elseif rest ~= '' then
    local terms = {}
    for term in string.gmatch(rest, '[^\\t]+') do terms[#terms + 1] = {read(term)} end
    if #terms == 1 then asked, answered = terms[1][1], terms[1][2] end
    for id, n in pairs(#terms > 1 and terms[1][1] or {}) do
      local least, most = n, terms[1][2][id]
      for k = 2, #terms do
        local other = terms[k][1][id]
        if not other then least = nil; break end
        if other + terms[k][2][id] < least + most then least, most = other, terms[k][2][id] end
      end
      if least then asked[id], answered[id] = least, most end
    end
  end
  local size = 0
  for id in pairs(asked) do
    size = size + 1
    if not seen[id] then seen[id] = true; ids[#ids + 1] = id end
  end
  phrases[#phrases + 1], sizes[#sizes + 1] = {asked, answered}, size
end
local stats = redis.call('HMGET', base .. ':stats', 'rows', 'tokens')
local rows, tokens = tonumber(stats[1]) or 0, tonumber(stats[2]) or 0
local average = rows > 0 and tokens / rows or 1.0
local weights = {}
for k, size in ipairs(sizes) do
  local value = math.log((rows - size + 0.5) / (size + 0.5))
  weights[k] = value > 0.0 and value or 1e-6
end
local scored = {}
for s = 1, #ids, 4000 do
  local last = math.min(s + 3999, #ids)
  local meta = redis.call('HMGET', base .. ':meta', unpack(ids, s, last))
  for n = s, last do
    local value = meta[n - s + 1]
    if value then  -- (gone if deleted meanwhile)
      local space = string.find(value, ' ', 1, true)
      local length, time = tonumber(string.sub(value, 1, space - 1)), string.sub(value, space + 1)
      local ts = tonumber(time)
      if not ((since and ts < since) or (till and ts >= till)) then
        local score, id = 0.0, ids[n]
        for k, phrase in ipairs(phrases) do
          local asked = phrase[1][id]
          if asked then
            local freq = asked + 0.0
            for _ = 1, phrase[2][id] do freq = freq + answer end
            score = score + weights[k] * ((freq * (k1 + 1.0)) / (freq + k1 * (1 - b + b * length / average)))
          end
        end
        scored[#scored + 1] = {score, ts, tonumber(id), time}
      end
    end
  end
end
table.sort(scored, function(x, y)
  if x[1] ~= y[1] then return x[1] > y[1] end
  if x[2] ~= y[2] then return x[2] > y[2] end
  return x[3] < y[3]
end)
local kept, last = {}, nil
for _, found in ipairs(scored) do
  local p = redis.call('HMGET', base .. ':p:' .. found[3], unpack(fields))
  if p[1] then
    if #kept >= limit and (found[1] ~= last[1] or found[2] ~= last[2]) then break end
    local first, out = tonumber(p[4]), false
    for _, range in ipairs(leave) do
      if p[2] == range[1] and p[3] == range[2] and first >= range[3] then out = true; break end
    end
    if not out then
      last = found
      kept[#kept + 1] = {found[3], string.format('%.17g', found[1]), found[4], p}
    end
  end
end
return kept
"""


def keyword(
    client: redis.Redis,
    keys: Keys,
    tokenizer: Tokenizer,
    expression: str,
    limit: int,
    since: float | None,
    until: float | None,
    leave_out: Sequence[tuple[str, str, int]] = (),
) -> list[tuple[Row, StoredPassage]]:
    """The best `limit` passages for an expression, as `store.MemoryIndex.keyword` finds and orders them, each with
    the passage as stored, in one round trip; ties (same score and time) ordered by session and first message as the
    SQLite index orders them."""
    args: list[EncodableT] = [limit, _bound(since), _bound(until), repr(K1), repr(B), repr(ANSWER_WEIGHT)]
    args += [len(leave_out), len(FIELDS), *FIELDS, *(value for each in leave_out for value in each)]
    args += [_argument(phrase) for phrase in phrases(expression, tokenizer)]
    kept = []
    for rowid, score, ts, values in client.register_script(KEYWORD)(keys=[keys.base], args=args):
        found = stored(int(rowid), values)
        kept.append(((found.id, float(score), float(ts), found.passage.asked, found.passage.answered), found))
    kept.sort(key=lambda item: (-item[0][1], -item[0][2], item[1].session, item[1].passage.first))
    return kept[:limit]


def _bound(value: float | None) -> str:
    return "" if value is None else repr(value)


# How many passages match each group of phrases (ARGV[1]: the groups' sizes), counted where they are: a word's
# ids, not its postings, are all a count needs. A group's lone terms (its words and the terms its prefixes stand for,
# each once) count as the longest one's length plus the others' ids it lacks, so a frequent word's ids are never
# listed; a phrase of several words counts where all are. Then the highest passage id.
COUNTS = """
local base, counts, at = KEYS[1], {}, 2
local function key(term) return base .. ':t:' .. term end
for size in string.gmatch(ARGV[1], '%d+') do
  size = tonumber(size)
  local lone, listed, joint = {}, {}, {}
  for k = at, at + size - 1 do
    local kind, rest, terms = string.sub(ARGV[k], 1, 1), string.sub(ARGV[k], 2), {}
    if kind == 'p' then
      terms = redis.call('ZRANGEBYLEX', base .. ':terms', '[' .. rest, '(' .. rest .. '\\255')
    else
      for term in string.gmatch(rest, '[^\\t]+') do terms[#terms + 1] = term end
      if #terms > 1 then joint[#joint + 1], terms = terms, {} end
    end
    for _, term in ipairs(terms) do
      if not listed[term] then listed[term] = true; lone[#lone + 1] = term end
    end
  end
  local longest, n, seen = nil, 0, {}
  for _, term in ipairs(lone) do
    local length = redis.call('HLEN', key(term))
    if not longest or length > n then longest, n = term, length end
  end
  local function lacks(id) return not longest or redis.call('HEXISTS', key(longest), id) == 0 end
  for _, term in ipairs(lone) do
    if term ~= longest then
      for _, id in ipairs(redis.call('HKEYS', key(term))) do
        if not seen[id] then
          seen[id] = true
          if lacks(id) then n = n + 1 end
        end
      end
    end
  end
  for _, terms in ipairs(joint) do
    for _, id in ipairs(redis.call('HKEYS', key(terms[1]))) do
      if not seen[id] and lacks(id) then
        local all = true
        for k = 2, #terms do all = all and redis.call('HEXISTS', key(terms[k]), id) == 1 end
        if all then seen[id] = true; n = n + 1 end
      end
    end
  end
  counts[#counts + 1] = n
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
) -> list[tuple[list[StoredPassage], list[StoredPassage]]]:
    """Up to `before` exchanges before each passage in its log (nearest first) and `after` after it, in one round
    trip."""
    if not found:
        return []
    args: list[EncodableT] = [before, after, len(FIELDS), *FIELDS]
    for each in found:
        args += [log_field(each.session, each.log), each.passage.first]
    read = client.register_script(AROUND)(keys=[keys.base], args=args)
    return [
        ([stored(int(r[0]), r[1:]) for r in earlier], [stored(int(r[0]), r[1:]) for r in later])
        for earlier, later in read
    ]


def log_field(session: str, log: str) -> str:
    """How a log is named in the index's keys and its `logs` hash."""
    return f"{session}\n{log}"


def stored(rowid: int, values: Sequence[bytes | str | None]) -> StoredPassage:
    """A passage from its hash's FIELDS."""
    kind, session, log, first, ts, speaker, asked, answered = (as_text(value or "") for value in values)
    return StoredPassage(rowid, session, log, Passage(kind, float(ts), speaker, asked, answered, int(first)))
