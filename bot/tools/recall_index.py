"""A throwaway SQLite FTS5 index over a memory scope's passages, ranked by BM25."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Passage:
    """One searchable piece of a chat's past: a HISTORY.md entry or an archived exchange, with its date."""

    date: str
    source: str
    text: str


@dataclass(frozen=True, slots=True)
class Found:
    """A passage that matched, with an excerpt around the matching words."""

    date: str
    source: str
    excerpt: str


def match_expression(query: str) -> str:
    """The query's words as an FTS5 OR of quoted prefix terms, so no user text is read as FTS5 syntax."""
    words = {word.lower() for word in _WORD.findall(query)}
    return " OR ".join(f'"{word}"*' for word in sorted(words))


def best_passages(passages: Iterable[Passage], query: str, limit: int = 5) -> list[Found]:
    """The `limit` passages that match `query` best (BM25), best first; none when the query has no words."""
    expression = match_expression(query)
    if not expression:
        return []
    with sqlite3.connect(":memory:") as db:
        db.execute("CREATE VIRTUAL TABLE passages USING fts5(text, date UNINDEXED, source UNINDEXED)")
        db.executemany(
            "INSERT INTO passages (text, date, source) VALUES (?, ?, ?)", ((p.text, p.date, p.source) for p in passages)
        )
        rows = db.execute(
            "SELECT date, source, snippet(passages, 0, '', '', '…', 48) FROM passages "
            "WHERE passages MATCH ? ORDER BY bm25(passages) LIMIT ?",
            (expression, limit),
        ).fetchall()
    return [Found(date, source, excerpt) for date, source, excerpt in rows]
