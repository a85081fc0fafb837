"""FTS5's own terms of a text (the `porter unicode61` tokenizer the SQLite index uses), read through an in-memory
SQLite table and its `fts5vocab` view, and the parameters of FTS5's `bm25()`: an index kept elsewhere (Redis) then
finds and ranks what the SQLite index does, down to the stemmer's quirks and the float arithmetic."""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

K1 = 1.2  # FTS5's bm25() parameters
B = 0.75
ANSWER_WEIGHT = 0.6  # as store.ANSWER_WEIGHT: a word in the reply counts for less than one in what the user said
_PHRASE = re.compile(r'"((?:[^"]|"")*)"(\*?)')

Counts = tuple[int, int]  # a term's occurrences in what was asked and in what was answered


@dataclass(frozen=True, slots=True)
class Terms:
    """A passage's terms with their occurrences per column, and its length in tokens (both columns)."""

    counts: dict[str, Counts]
    length: int


@dataclass(frozen=True, slots=True)
class Phrase:
    """One term of an FTS5 expression: its tokens as the index has them, and whether it matches them as a prefix."""

    tokens: tuple[str, ...]
    prefix: bool


class Tokenizer:
    """FTS5's `porter unicode61` tokenizer in a private in-memory database (thread-safe: a lock serialises it)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute(
            "CREATE VIRTUAL TABLE texts USING fts5(asked, answered, content='', tokenize='porter unicode61')"
        )
        self._db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(texts, 'instance')")
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[tuple[str, str]]) -> list[Terms]:
        """The terms of each (asked, answered), as the SQLite index counts them."""
        if not texts:
            return []
        found: list[Terms] = [Terms({}, 0) for _ in texts]
        with self._lock:
            self._db.executemany(
                "INSERT INTO texts (rowid, asked, answered) VALUES (?, ?, ?)",
                [(n, asked, answered) for n, (asked, answered) in enumerate(texts, 1)],
            )
            try:
                rows = self._db.execute("SELECT doc, term, col FROM terms").fetchall()
            finally:
                self._db.execute("INSERT INTO texts (texts) VALUES ('delete-all')")
        lengths = [0] * len(texts)
        for doc, term, column in rows:
            counts = found[doc - 1].counts
            asked, answered = counts.get(term, (0, 0))
            counts[term] = (asked + 1, answered) if column == "asked" else (asked, answered + 1)
            lengths[doc - 1] += 1
        return [Terms(terms.counts, length) for terms, length in zip(found, lengths, strict=True)]

    def tokens(self, text: str) -> tuple[str, ...]:
        """The terms of a query's text, in order."""
        with self._lock:
            self._db.execute("INSERT INTO texts (rowid, asked, answered) VALUES (1, ?, '')", (text,))
            try:
                rows = self._db.execute("SELECT term FROM terms ORDER BY offset").fetchall()
            finally:
                self._db.execute("INSERT INTO texts (texts) VALUES ('delete-all')")
        return tuple(term for (term,) in rows)


def phrases(expression: str, tokenizer: Tokenizer) -> list[Phrase]:
    """The phrases of the expressions `query.Query.expression` makes: quoted terms (`"word"`, `"root"*`) joined
    by OR; anything else is a ValueError."""
    found: list[Phrase] = []
    for part in expression.split(" OR "):
        match = _PHRASE.fullmatch(part.strip())
        if match is None:
            raise ValueError(f"not a quoted term: {part!r}")
        found.append(Phrase(tokenizer.tokens(match.group(1).replace('""', '"')), bool(match.group(2))))
    return found
