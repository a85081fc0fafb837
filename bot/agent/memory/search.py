"""Ranking a scope's passages for a query: keyword hits (BM25, a light recency and time-window lift), fused by
reciprocal rank with any further ranked lists (such as a vector search) the caller brings."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.agent.memory.index import MemoryIndex, StoredPassage
from bot.agent.memory.query import Query

CANDIDATES = 60  # keyword hits rescored before fusion
RECENCY_LIFT = 0.15  # how much more a passage from today weighs than a very old one, at most
RECENCY_HALF_LIFE = 60 * 86400.0  # seconds for that lift to halve
WINDOW_LIFT = 0.5  # for a passage inside the period the question names ("in spring", "3 weeks ago")
RRF_K = 60

# Another ranked list of passage ids, best first, for the same query and filters (e.g. by embeddings).
Ranker = Callable[[MemoryIndex, Query, int, float | None, float | None], list[int]]


@dataclass(frozen=True, slots=True)
class Shown:
    """The part of a session the prompt already shows: its live log's messages from number `start` on."""

    session: str
    start: int


@dataclass(frozen=True, slots=True)
class Hit:
    """A passage found for a query, best first in a result."""

    stored: StoredPassage
    score: float


def keyword_ranking(
    index: MemoryIndex, query: Query, limit: int, since: float | None, until: float | None, now: float
) -> list[tuple[int, float]]:
    """Keyword hits as (id, score), best first: BM25, lifted a little for recent ones and those in the query's
    period."""
    if not query.words:
        return []
    found = index.keyword(query.expression, max(limit, CANDIDATES), since, until)
    stored = index.passages(rowid for rowid, _ in found)
    scored = []
    for rowid, score in found:
        ts = stored[rowid].passage.ts
        lift = 1.0 + RECENCY_LIFT * 0.5 ** (max(0.0, now - ts) / RECENCY_HALF_LIFE)
        if query.since is not None and query.until is not None and query.since <= ts < query.until:
            lift += WINDOW_LIFT
        scored.append((rowid, score * lift, ts))
    scored.sort(key=lambda item: (-item[1], -item[2], item[0]))
    return [(rowid, score) for rowid, score, _ in scored]


def fuse(rankings: Sequence[Sequence[int]]) -> list[int]:
    """Reciprocal-rank fusion of ranked id lists, best first; a single list comes back as it is."""
    if len(rankings) == 1:
        return list(rankings[0])
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, rowid in enumerate(ranking):
            scores[rowid] = scores.get(rowid, 0.0) + 1.0 / (RRF_K + rank + 1)
    return sorted(scores, key=lambda rowid: (-scores[rowid], rowid))


def best_hits(
    index: MemoryIndex,
    query: Query,
    limit: int,
    now: float,
    since: float | None = None,
    until: float | None = None,
    shown: Shown | None = None,
    rankers: Sequence[Ranker] = (),
) -> list[Hit]:
    """The `limit` best passages for the query between `since` and `until`, leaving out what the prompt shows."""
    keyword = keyword_ranking(index, query, limit, since, until, now)
    scores = dict(keyword)
    rankings = [[rowid for rowid, _ in keyword]]
    rankings += [ranker(index, query, max(limit, CANDIDATES), since, until) for ranker in rankers]
    ordered = fuse(rankings)
    live = index.live_log(shown.session) if shown is not None else None
    hits: list[Hit] = []
    stored = index.passages(ordered)
    for rowid in ordered:
        found = stored.get(rowid)
        if found is None or (shown is not None and _in_prompt(found, shown, live)):
            continue
        hits.append(Hit(found, scores.get(rowid, 0.0)))
        if len(hits) == limit:
            break
    return hits


def _in_prompt(found: StoredPassage, shown: Shown, live: str | None) -> bool:
    return found.session == shown.session and found.log == live and found.passage.first >= shown.start
