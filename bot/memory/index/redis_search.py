"""Keyword search over a scope's Redis index: the postings of an expression's terms read in two round trips and
ranked by FTS5's BM25 in Python, with the SQLite index's filters and order (score, newest, session, first)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.memory.index.fts_terms import Counts, Phrase, Tokenizer, bm25, frequency, idf, phrases

if TYPE_CHECKING:
    import redis

Row = tuple[int, float, float, str, str]  # id, BM25 (higher better), time, asked, answered
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


def phrase_postings(client: redis.Redis, keys: Keys, found: Sequence[Phrase]) -> list[dict[int, Counts]]:
    """Each phrase's passages with its occurrences there (a prefix's terms added up; a phrase of several tokens
    counted where all are, as often as its rarest: FTS5 would also want them adjacent)."""
    pipe = client.pipeline(transaction=False)
    for phrase in found:
        if phrase.prefix and phrase.tokens:
            start = phrase.tokens[0].encode()
            pipe.zrangebylex(keys("terms"), b"[" + start, b"(" + start + b"\xff")
    expanded = iter(pipe.execute())
    wanted = [
        [*next(expanded), *phrase.tokens[1:]] if phrase.prefix and phrase.tokens else list(phrase.tokens)
        for phrase in found
    ]
    for terms in wanted:
        for term in terms:
            pipe.hgetall(keys.term(term))
    replies = iter(pipe.execute())
    postings: list[dict[int, Counts]] = []
    for phrase, terms in zip(found, wanted, strict=True):
        read = [next(replies) for _ in terms]
        if phrase.prefix:
            postings.append(_added(read))
        else:
            postings.append(_all_of(read))
    return postings


def _added(read: list[dict[str, str]]) -> dict[int, Counts]:
    total: dict[int, Counts] = {}
    for term in read:
        for rowid, value in term.items():
            asked, answered = _counts(value)
            was = total.get(int(rowid), (0, 0))
            total[int(rowid)] = (was[0] + asked, was[1] + answered)
    return total


def _all_of(read: list[dict[str, str]]) -> dict[int, Counts]:
    if not read:
        return {}
    common = set(read[0]).intersection(*read[1:])
    return {int(rowid): min((_counts(term[rowid]) for term in read), key=sum) for rowid in common}


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
    postings = phrase_postings(client, keys, phrases(expression, tokenizer))
    found = set().union(*postings)
    if not found:
        return []
    ids = list(found)
    pipe = client.pipeline(transaction=False)
    pipe.hmget(keys("stats"), ["rows", "tokens"])
    pipe.hmget(keys("meta"), [str(rowid) for rowid in ids])
    (rows_text, tokens_text), meta = pipe.execute()
    rows, tokens = int(rows_text or 0), int(tokens_text or 0)
    average = tokens / rows if rows else 1.0
    weights = [idf(rows, len(hits)) for hits in postings]
    scored: list[tuple[float, float, int]] = []
    for rowid, kept in zip(ids, meta, strict=True):
        if kept is None:
            continue  # deleted between the two reads
        length_text, ts_text = kept.split(" ")
        ts = float(ts_text)
        if (since is not None and ts < since) or (until is not None and ts >= until):
            continue
        present = [(w, frequency(hits[rowid])) for w, hits in zip(weights, postings, strict=True) if rowid in hits]
        scored.append((bm25(present, int(length_text), average), ts, rowid))
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


def matching(client: redis.Redis, keys: Keys, tokenizer: Tokenizer, expressions: Sequence[str]) -> list[int]:
    """How many passages match each expression."""
    parsed = [phrases(expression, tokenizer) for expression in expressions]
    flat = [phrase for found in parsed for phrase in found]
    postings = iter(phrase_postings(client, keys, flat))
    return [len(set().union(*(next(postings) for _ in found))) for found in parsed]
