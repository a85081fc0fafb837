"""Ranking a scope's passages for a query: keyword hits (BM25, a light recency and time-window lift), fused by
reciprocal rank with any further ranked lists (such as a vector search) the caller brings."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from bot.memory.index.protocols import PassageIndex
from bot.memory.index.query import Query
from bot.memory.index.restating import RESTATED_WEIGHT, asked_roots, echoes, question_roots, restated
from bot.memory.index.second_pass import FED_BACK, expanded
from bot.memory.index.store import StoredPassage
from bot.memory.index.word_counts import WordCounts, narrow
from bot.memory.index.wording import kin, roots_of

CANDIDATES = 60  # keyword hits rescored before fusion
TURN_CANDIDATES = 30  # ... for auto-recall, on every turn: half as many, still more than the windows it looks at
TURN_WORDS = 8  # auto-recall searches a longer message by this many of its rarest words (`rarest_words`)
PASSAGES_KEPT = 2048  # passages whose roots are kept: ten busy chats' candidates (1,593 in the replay), ~6.5 MB
NAME_WEIGHT = 3.0  # a name in the question (Maya, Lisbon) weighs triple: the passage should be about it
COVER_FLOOR = 0.1  # the share of its BM25 score a passage keeps when it covers none of the question
RECENCY_LIFT = 0.15  # how much more a passage from today weighs than a very old one, at most
RECENCY_HALF_LIFE = 60 * 86400.0  # seconds for that lift to halve
WINDOW_LIFT = 0.5  # for a passage inside the period the question names ("in spring", "3 weeks ago")
KIND_SHARE = 0.3  # of a word's weight, for a passage that names a thing of the kind the word names, not the word
RRF_K = 60
NO_ROOTS: frozenset[str] = frozenset()
COMMON_SHARE = 0.05  # a question word in more than this share of a scope's passages is left out of the search
COMMON_FLOOR = 100  # ... unless it is in fewer passages than this

# Another ranked list of passage ids, best first, for the same query and filters (e.g. by embeddings).
Ranker = Callable[[PassageIndex, Query, int, float | None, float | None], list[int]]


@dataclass(frozen=True, slots=True)
class Shown:
    """What the prompt already shows: the session's live log from message `start` on. With `chat`, the same
    chat's other sessions (its threads, or the channel a thread belongs to) count as the current conversation
    too: their last `window` messages are left out as well."""

    session: str
    start: int
    chat: str | None = None
    window: int = 0


@dataclass(frozen=True, slots=True)
class Hit:
    """A passage found for a query, best first in a result."""

    stored: StoredPassage
    score: float
    window: tuple[StoredPassage, ...] = ()  # the exchanges shown around it, in order, itself among them
    chars: int = 0  # the characters its window may take when shown (0: no window)


Row = tuple[int, float, float, str, str]  # a keyword hit as the index gives it: id, BM25, time, asked, answered


def keyword_ranking(
    index: PassageIndex,
    query: Query,
    limit: int,
    now: float,
    since: float | None = None,
    until: float | None = None,
    leave_out: Sequence[tuple[str, str, int]] = (),
    counts: WordCounts | None = None,
) -> list[tuple[int, float]]:
    """Keyword hits as (passage id, score), best first: BM25 weighed by how much of the question (by rarity) a
    passage covers, lifted a little for recent ones and those in the question's period. `counts` keeps how many
    passages hold each word, for further searches."""
    counts = WordCounts() if counts is None else counts
    return rescored(query, keyword_rows(index, query, limit, since, until, leave_out, counts), now, counts)


def keyword_rows(
    index: PassageIndex,
    query: Query,
    limit: int,
    since: float | None,
    until: float | None,
    leave_out: Sequence[tuple[str, str, int]],
    counts: WordCounts,
    searched_words: tuple[str, ...] = (),
    candidates: int = CANDIDATES,
) -> list[Row]:
    """The index's best `candidates` (at least `limit`) keyword hits for the query's words (the common ones left
    out), or only for `searched_words` when given; the query's words are counted into `counts` meanwhile."""
    if not query.words:
        return []
    things = [] if searched_words else [thing for _, found in query.kinds for thing in found]
    total = counts.count(index, [*query.words, *things])
    searched = replace(query, words=searched_words) if searched_words else _without_common(query, counts, total)
    return index.keyword(searched.expression, max(limit, candidates), since, until, leave_out)


def rescored(
    query: Query, found: Sequence[Row], now: float, counts: WordCounts, echoes_down: bool = False
) -> list[tuple[int, float]]:
    """Keyword hits as `keyword_ranking` orders them (their words counted in `counts` already); `echoes_down` ranks
    earlier questions whose reply says nothing of this one down as restatements are."""
    if not query.words:
        return []
    total = counts.total
    weights = [_idf(counts[word], total) * (NAME_WEIGHT if word in query.names else 1.0) for word in query.words]
    owners: dict[str, list[int]] = {}  # each root of the question's concepts -> the concepts it stands for
    for number, concept in enumerate(query.concepts):
        for one in concept:
            owners.setdefault(one, []).append(number)
    asked_for = frozenset(owners)
    kinds = query.things
    kind_roots = frozenset(kinds)
    whole = sum(weights) or 1.0
    window = (query.since, query.until) if query.since is not None and query.until is not None else None
    scored = []
    question = question_roots(query.words)
    shares: dict[tuple[frozenset[str], frozenset[str]], float] = {}  # a passage's share of its BM25, by the roots held
    for rowid, score, ts, asked, answered in found:
        roots, asks = _roots(asked, answered)
        held = roots & asked_for  # the concepts it covers follow from the few question roots it holds
        named = roots & kind_roots if kind_roots else NO_ROOTS  # ... and the things of a kind it names
        share = shares.get((held, named))
        if share is None:
            numbers = {n for one in held for n in owners[one]}
            covered = sum(weights[number] for number in sorted(numbers))  # in order, as floats add
            if named and (things := {n for one in named for n in kinds[one]} - numbers):
                covered += KIND_SHARE * sum(weights[number] for number in sorted(things))
            share = shares[(held, named)] = COVER_FLOOR + (1 - COVER_FLOOR) * covered / whole
        lift = 1.0 + RECENCY_LIFT * 0.5 ** (max(0.0, now - ts) / RECENCY_HALF_LIFE)
        if window is not None and window[0] <= ts < window[1]:
            lift += WINDOW_LIFT
        if asks and restated(asks, question) or echoes_down and echoes(asked, answered, question):
            lift *= RESTATED_WEIGHT
        scored.append((-score * share * lift, -ts, rowid))  # sorted as they are: best first, then the newest
    scored.sort()
    return [(rowid, -score) for score, _, rowid in scored]


def joined(first: Sequence[Row], leads: Sequence[Row]) -> list[Row]:
    """The hits of the question's words and those of the added ones as one search of both would score them: BM25
    adds up over the terms, so a passage both found scores the sum (one only the second found lacks its share of
    the question's words, which kept it out of the first's best)."""
    rows = {row[0]: row for row in first}
    for rowid, score, ts, asked, answered in leads:
        earlier = rows.get(rowid)
        rows[rowid] = (rowid, score + (earlier[1] if earlier is not None else 0.0), ts, asked, answered)
    return list(rows.values())


@lru_cache(maxsize=PASSAGES_KEPT)
def _roots(asked: str, answered: str) -> tuple[frozenset[str], frozenset[str]]:
    """The roots of a passage's words, and those of the question it asks if it is one (`restating.asked_roots`):
    the same passages come up turn after turn, so they are kept for a while."""
    return frozenset(roots_of(f"{asked} {answered}")), asked_roots(asked)


def _without_common(query: Query, counts: WordCounts, total: int) -> Query:
    """The query without words (and things of its kinds) most passages have: they say little, and ranking them costs
    the most; the rarest word stays when all are common. Things no passage holds are left out too: a kind of names
    brings a hundred of them (composers), most never said, and each is one more phrase to look up."""
    common = max(COMMON_FLOOR, int(COMMON_SHARE * total))
    kept = tuple(word for word in query.words if counts[word] <= common)
    rare = ((word, tuple(thing for thing in found if 0 < counts[thing] <= common)) for word, found in query.kinds)
    kinds = tuple((word, things) for word, things in rare if things)
    if kept == query.words and kinds == query.kinds:
        return query
    return replace(query, words=kept or (min(query.words, key=counts.__getitem__),), kinds=kinds)


def rarest_words(query: Query, counts: WordCounts, limit: int) -> Query:
    """A message of more than `limit` words read as its `limit` rarest that some passage holds (by the scope's counts,
    in the message's order): a long statement's rarest words say what it is about, and searching all of its words
    costs BM25 over most of the scope; a shorter message stays as it is."""
    if len(query.words) <= limit:
        return query
    held = sorted((word for word in query.words if counts[word]), key=counts.__getitem__)[:limit]
    kept = tuple(word for word in query.words if word in held)
    return replace(query, words=kept, names=query.names.intersection(kept) if query.names else query.names)


def _idf(matching: int, total: int) -> float:
    return math.log(1.0 + (total - matching + 0.5) / (matching + 0.5))


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
    index: PassageIndex,
    query: Query,
    limit: int,
    now: float,
    since: float | None = None,
    until: float | None = None,
    shown: Shown | None = None,
    rankers: Sequence[Ranker] = (),
    follow: bool = False,
    counts: WordCounts | None = None,
) -> list[Hit]:
    """The `limit` best passages for the query between `since` and `until`, leaving out what the prompt shows;
    `follow` (the recall tool's deeper search) fuses in a second search with what the first hits name
    (`second_pass`) and one of the question's words alone (no root prefixes or synonyms), ranks down earlier
    questions whose reply says nothing of this one (`restating.echoes`), and searches the things of the kinds the
    question names (`Query.kinds`) and the kin of the things it names (`with_kin`): the tool is called when the
    prompt did not answer, and auto-recall, on every turn, does not pay for these; auto-recall searches a message of
    more than TURN_WORDS words by its rarest (`rarest_words`)."""
    leave_out = shown_ranges(index, shown) if shown is not None else []
    counts = WordCounts() if counts is None else counts
    if follow:
        query = with_kin(index, query, counts)
    elif query.kinds:
        query = replace(query, kinds=())
    candidates = CANDIDATES if follow else TURN_CANDIDATES
    if not follow and len(query.words) > TURN_WORDS:
        counts.count(index, query.words)
        query = rarest_words(query, counts, TURN_WORDS)
    rows = keyword_rows(index, query, limit, since, until, leave_out, counts, candidates=candidates)
    keyword = rescored(query, rows, now, counts, follow)
    scores = dict(keyword)
    rankings = [[rowid for rowid, _ in keyword]]
    first = index.passages(rowid for rowid, _ in keyword[:FED_BACK]) if follow else {}
    wider = expanded(index, query, [f"{p.passage.asked}\n{p.passage.answered}" for p in first.values()], counts)
    if wider is not None:  # only the added words are searched: the question's were, and their hits are reused
        leads = wider.words[len(query.words) :]
        led = keyword_rows(index, wider, limit, since, until, leave_out, counts, leads)
        followed = rescored(wider, joined(rows, led), now, counts, follow)
        rankings.append([rowid for rowid, _ in followed])
    if follow:  # the words alone, no synonyms or root prefixes: the very word ("photo", not "picture") ranks first
        alone = counts.count(index, [narrow(word) for word in query.words])  # each word's own rarity, not its root's
        common = max(COMMON_FLOOR, int(COMMON_SHARE * alone))
        kept = [word for word in query.words if counts[narrow(word)] <= common]
        searched = replace(query, words=tuple(kept)).narrow_expression
        narrow_rows = index.keyword(searched, max(limit, CANDIDATES), since, until, leave_out) if kept else []
        rankings.append([rowid for rowid, _ in rescored(query, narrow_rows, now, counts, follow)])
    rankings += [ranker(index, query, max(limit, CANDIDATES), since, until) for ranker in rankers]
    ordered = fuse(rankings)
    hits: list[Hit] = []
    for start in range(0, len(ordered), limit * 2):  # further ranked lists may bring passages the prompt shows
        stored = index.passages(ordered[start : start + limit * 2])
        for rowid in ordered[start : start + limit * 2]:
            found = stored.get(rowid)
            if found is None or in_prompt(found, leave_out):
                continue
            hits.append(Hit(found, scores.get(rowid, 0.0)))
            if len(hits) == limit:
                return hits
    return hits


def with_kin(index: PassageIndex, query: Query, counts: WordCounts) -> Query:
    """The query with the kin of each name in it that no passage of the scope holds searched as things of a kind
    (Vivaldi: composer, Bach, Mozart …); a name the chat has said (a member's, or a thing it spoke of) is found as
    itself, and its kin would only crowd it."""
    named = [(word, others) for word in query.words if (others := kin(word))]
    if not named:
        return query
    counts.count(index, [word for word, _ in named])
    return replace(query, kinds=query.kinds + tuple((word, others) for word, others in named if not counts[word]))


def shown_ranges(index: PassageIndex, shown: Shown) -> list[tuple[str, str, int]]:
    """(session, live log, first message number) of each stretch the prompt shows or the chat is still on."""
    ranges = []
    for session, log, count in index.live_logs(shown.chat or shown.session):
        if session == shown.session:
            ranges.append((session, log, shown.start))
        elif shown.chat is not None:
            ranges.append((session, log, max(0, count - shown.window)))
    return ranges


def in_prompt(found: StoredPassage, ranges: Sequence[tuple[str, str, int]]) -> bool:
    """Whether a passage is in one of the stretches `shown_ranges` gives."""
    for session, log, first in ranges:  # a loop, not any(): it runs for every passage a search looks at
        if found.passage.first >= first and found.session == session and found.log == log:
            return True
    return False
