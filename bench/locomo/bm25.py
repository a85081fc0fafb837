"""The comparator: plain BM25 (SQLite FTS5, porter stemming, English stop words dropped, the query's words
OR-ed) over whole exchanges, top five, with or without each hit's neighbouring exchanges."""

from __future__ import annotations

import sqlite3

from locomo.coverage import words

_STOP_WORDS = """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
    it its itself they them their theirs themselves what which who whom this that these those am is are was were be
    been being have has had having do does did doing a an the and but if or because as until while of at by for with
    about against between into through during before after above below to from up down in out on off over under
    again further then once here there when where why how all any both each few more most other some such no nor not
    only own same so than too very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn hadn
    hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
"""
STOP_WORDS = frozenset(_STOP_WORDS.split())  # a common English list (as NLTK's), never fitted to these conversations
TOP = 5


class PlainBM25:
    """An FTS5 table of texts in the order they were added, searched by BM25."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute("CREATE VIRTUAL TABLE texts USING fts5(body, tokenize = 'porter unicode61')")
        self.texts: list[str] = []

    def add(self, text: str) -> None:
        """Index one more text (an exchange)."""
        self._db.execute("INSERT INTO texts (rowid, body) VALUES (?, ?)", (len(self.texts), text))
        self.texts.append(text)

    def top(self, query: str, limit: int = TOP) -> list[int]:
        """The positions of the best `limit` texts for the query's words, best first; none without content words."""
        kept = sorted({word for word in words(query) if word not in STOP_WORDS})
        if not kept:
            return []
        expression = " OR ".join(f'"{word}"' for word in kept)
        rows = self._db.execute(
            "SELECT rowid FROM texts WHERE texts MATCH ? ORDER BY bm25(texts) LIMIT ?", (expression, limit)
        )
        return [row[0] for row in rows]

    def found(self, positions: list[int]) -> str:
        """The texts at `positions`, one after another."""
        return "\n\n".join(self.texts[at] for at in positions)


def with_neighbours(positions: list[int], count: int) -> list[int]:
    """Each hit with the exchange before and after it (of `count`), once each, in the order found."""
    seen: dict[int, None] = {}
    for at in positions:
        for near in (at - 1, at, at + 1):
            if 0 <= near < count:
                seen.setdefault(near)
    return list(seen)
