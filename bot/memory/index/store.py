"""One memory scope's search index: an SQLite file of passages with an FTS5 (porter-stemmed) index over them.

The index is a cache of the session logs, HISTORY.md and MEMORY.md: it records how far it has read
each of them, and can be deleted at any time. Not thread-safe: its owner serialises calls. Those read marks are
kept in memory too (a search checks them all); `refresh()` drops them when another connection wrote.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from bot.memory.index.passages import ExchangePart, KeptPassages, Passage
from bot.memory.index.passages import StoredPassage as StoredPassage  # where ranking and backends import it from
from bot.memory.index.vectors import PassageVectors
from bot.sessions.logs import Cursor
from bot.storage.sqlite import open_store

logger = logging.getLogger(__name__)

SCHEMA_VERSION = 1
ANSWER_WEIGHT = 0.6  # a word in the reply counts for less than one in what the user said
MERGE_PAGES = 16  # FTS5 pages merged after a write that does not rewrite the index (`_settle`)
OPTIMIZE_BELOW = 4096  # passages: an index this small is rewritten as one FTS5 segment after each write (a few ms)
OPTIMIZE_SHARE = 0.1  # a bigger one once the passages written since its last rewrite reach this share of it
_SCHEMA = """
CREATE TABLE passages (
    id INTEGER PRIMARY KEY, kind TEXT NOT NULL, session TEXT NOT NULL, log TEXT NOT NULL,
    first INTEGER NOT NULL, ts REAL NOT NULL, speaker TEXT NOT NULL, asked TEXT NOT NULL, answered TEXT NOT NULL
);
CREATE INDEX passages_by_log ON passages (session, log, first);
CREATE VIRTUAL TABLE passage_text USING fts5(
    asked, answered, content='passages', content_rowid='id', tokenize='porter unicode61'
);
CREATE TABLE logs (
    session TEXT NOT NULL, log TEXT NOT NULL, offset INTEGER NOT NULL, count INTEGER NOT NULL,
    live INTEGER NOT NULL, open_id INTEGER, PRIMARY KEY (session, log)
);
CREATE TABLE marks (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


_COLUMNS = "id, kind, session, log, first, ts, speaker, asked, answered"
# A log's passages are all exchanges (history entries and facts belong to no log), so its index covers this.
_LOG = "SELECT id, first FROM passages WHERE session = ? AND log = ? AND first"
_NEIGHBOURS = (
    f"SELECT * FROM ({_LOG} < ? ORDER BY first DESC LIMIT ?) "
    f"UNION ALL SELECT * FROM ({_LOG} > ? ORDER BY first LIMIT ?)"
)


class IndexUnusable(Exception):
    """The index file cannot be used as it is (corrupt, or of another version): it is to be rebuilt."""


def damaged(exc: Exception) -> bool:
    """Whether an error says the index file is damaged (to be rebuilt), not that a statement was wrong."""
    if isinstance(exc, IndexUnusable) or type(exc) is sqlite3.DatabaseError:  # "malformed", "not a database"
        return True
    return isinstance(exc, sqlite3.OperationalError) and "no such" in str(exc)  # a table or column gone


class MemoryIndex:
    """The passages of one scope and how far each source was read; keyword search over them ranked by BM25."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self.path = path
        self._kept = _ReadMarks(db)
        self._read = KeptPassages()  # passages searches read, kept between them
        self._unsettled = 0  # passages written since the index was last rewritten as one segment

    @classmethod
    def open(cls, path: Path) -> MemoryIndex:
        """Open (or create, mode 0600) the index at `path`; IndexUnusable when it is corrupt or of another version."""
        try:
            db = open_store(path, cache=True, threads=True)  # a cache: a lost last write is read again from the logs
        except sqlite3.DatabaseError as exc:
            raise IndexUnusable(str(exc)) from exc
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0 and not db.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
                db.executescript(f"BEGIN; {_SCHEMA} PRAGMA user_version={SCHEMA_VERSION}; COMMIT;")
            elif version != SCHEMA_VERSION:
                raise IndexUnusable(f"index version {version}, this relaybot uses {SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            db.close()
            raise IndexUnusable(str(exc)) from exc
        except IndexUnusable:
            db.close()
            raise
        return cls(db, path)

    def close(self) -> None:
        self._db.close()

    def refresh(self) -> None:
        """Start a use of the index: read marks kept in memory are dropped if another connection wrote since."""
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version != self._kept.version:
            self._kept.version = version
            self._kept.forget()
            self._read.forget()

    def cursors(self, session: str) -> dict[str, tuple[Cursor, bool]]:
        """Each known log of the session: how far it was read, and whether it is the live one."""
        return dict(self._kept.logs().get(session, {}))

    def live_logs(self, chat: str) -> list[tuple[str, str, int]]:
        """(session, live log, messages read) of the session `chat` and of its threads (`chat:…`)."""
        thread = chat + ":"
        return [
            (session, log, cursor.count)
            for session, logs in self._kept.logs().items()
            if session == chat or session.startswith(thread)
            for log, (cursor, live) in logs.items()
            if live
        ]

    def add_exchanges(
        self, session: str, parts: Sequence[ExchangePart], start: Cursor, end: Cursor, live: bool
    ) -> bool:
        """Store exchanges read from one log between two cursors, with the new cursor, in one transaction; False
        (and nothing stored) when the log's stored cursor is no longer `start`: another process got there first."""
        db = self._db
        with _transaction(self._db, self._kept):
            row = db.execute(
                "SELECT offset, open_id FROM logs WHERE session = ? AND log = ?", (session, end.log)
            ).fetchone()
            if (row[0] if row else 0) != start.offset:
                return False
            open_id = row[1] if row else None
            for part in parts:
                if not part.opens and open_id is not None:
                    self._extend_reply(open_id, "\n".join(part.replies))
                    self._read.changed(open_id)
                    continue
                passage = Passage("exchange", part.ts, part.speaker, part.asked, "\n".join(part.replies), part.first)
                open_id = self._insert(session, end.log, passage)
            if parts:
                self._unsettled = _settle(db, self._unsettled + len(parts))
            if live:
                db.execute("UPDATE logs SET live = 0 WHERE session = ? AND log != ?", (session, end.log))
            db.execute(
                "INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?, ?, ?)",
                (session, end.log, end.offset, end.count, int(live), open_id),
            )
            self._read.grown(session, end.log)
        return True

    def mark_archived(self, session: str, log: str) -> None:
        """Note that a log is no longer the session's live one."""
        with _transaction(self._db, self._kept):
            self._db.execute("UPDATE logs SET live = 0 WHERE session = ? AND log = ?", (session, log))

    def drop_log(self, session: str, log: str) -> None:
        """Forget a log that no longer exists, with its passages."""
        with _transaction(self._db, self._kept):
            rows = self._db.execute(
                "SELECT id, asked, answered FROM passages WHERE session = ? AND log = ?", (session, log)
            ).fetchall()
            for rowid, asked, answered in rows:
                self._unindex(rowid, asked, answered)
            self._db.execute("DELETE FROM passages WHERE session = ? AND log = ?", (session, log))
            self._db.execute("DELETE FROM logs WHERE session = ? AND log = ?", (session, log))
            self._read.forget()  # a dropped passage's id may come back for another

    def mark(self, name: str) -> str:
        """A source's read mark (HISTORY.md's offset, MEMORY.md's stamp); "" when none."""
        return self._kept.marks().get(name, "")

    def add_entries(
        self, passages: Iterable[Passage], mark: str, was: str, value: str, replace: str | None = None
    ) -> None:
        """Store passages and a source's new mark in one transaction, if its mark is still `was` (else another
        process stored them); `replace` drops that kind's passages first."""
        with _transaction(self._db, self._kept):
            row = self._db.execute("SELECT value FROM marks WHERE name = ?", (mark,)).fetchone()
            if (row[0] if row else "") != was:
                return
            if replace is not None:
                rows = self._db.execute("SELECT id, asked, answered FROM passages WHERE kind = ?", (replace,))
                for rowid, asked, answered in rows.fetchall():
                    self._unindex(rowid, asked, answered)
                self._db.execute("DELETE FROM passages WHERE kind = ?", (replace,))
                self._read.forget()
            for passage in passages:
                self._insert("", "", passage)
            self._db.execute("INSERT OR REPLACE INTO marks VALUES (?, ?)", (mark, value))

    def keyword(
        self,
        expression: str,
        limit: int,
        since: float | None,
        until: float | None,
        leave_out: Sequence[tuple[str, str, int]] = (),
    ) -> list[tuple[int, float, float, str, str]]:
        """The best `limit` passages matching an FTS5 expression, as (id, BM25 score (higher better), time, asked,
        answered), best first; each `leave_out` (session, log, first) skips that log's passages from that number on."""
        sql = (
            f"SELECT p.id, -bm25(passage_text, 1.0, {ANSWER_WEIGHT}) AS score, p.ts "
            "FROM passage_text "
            "JOIN passages p ON p.id = passage_text.rowid WHERE passage_text MATCH ?"
        )
        args: list[object] = [expression]
        if since is not None:
            sql += " AND p.ts >= ?"
            args.append(since)
        if until is not None:
            sql += " AND p.ts < ?"
            args.append(until)
        for session, log, first in leave_out:
            sql += " AND NOT (p.session = ? AND p.log = ? AND p.first >= ?)"
            args.extend((session, log, first))
        sql += " ORDER BY score DESC, p.ts DESC, p.session, p.first LIMIT ?"
        found = self._db.execute(sql, (*args, limit)).fetchall()
        stored = self.passages(rowid for rowid, _, _ in found)  # the texts as kept: the statement's sorter carries none
        rows = []
        for rowid, score, ts in found:
            passage = stored[rowid].passage
            rows.append((rowid, score, ts, passage.asked, passage.answered))
        return rows

    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]:
        """The stored passages with these ids, in id order."""
        return self._read.passages(ids, lambda wanted: _read_passages(self._db, wanted))

    def around(self, found: Sequence[StoredPassage], before: int, after: int) -> list[list[StoredPassage]]:
        """Each passage with up to `before` exchanges before it and `after` after it in the same log, in order."""
        return [
            self._read.around(each, before, after, partial(_neighbours, self._db, self.passages, each, before, after))
            for each in found
        ]

    def clear(self) -> None:
        """Forget every passage and read mark, so the next catch-up reads every source again."""
        with _transaction(self._db, self._kept):
            for table in ("passages", "logs", "marks"):
                self._db.execute(f"DELETE FROM {table}")
            self._db.execute("INSERT INTO passage_text (passage_text) VALUES ('delete-all')")
            self._read.forget()

    def matching(self, expressions: Sequence[str]) -> tuple[list[int], int]:
        """How many passages match each FTS5 expression, and the highest passage id (about how many there are), in
        one statement; with no expression and nothing written since, the id last read."""
        if not expressions and self._kept.top is not None:
            return [], self._kept.top
        count = "(SELECT count(*) FROM passage_text WHERE passage_text MATCH ?)"
        columns = [count] * len(expressions) + ["(SELECT coalesce(max(id), 0) FROM passages)"]
        *counts, last = self._db.execute(f"SELECT {', '.join(columns)}", expressions).fetchone()
        self._kept.top = int(last)
        return counts, self._kept.top

    def size(self) -> int:
        """How many passages the index holds."""
        return int(self._db.execute("SELECT count(*) FROM passages").fetchone()[0])

    def _insert(self, session: str, log: str, passage: Passage) -> int:
        p = passage
        cursor = self._db.execute(
            "INSERT INTO passages (kind, session, log, first, ts, speaker, asked, answered) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (p.kind, session, log, p.first, p.ts, p.speaker, p.asked, p.answered),
        )
        rowid = int(cursor.lastrowid or 0)
        self._db.execute(
            "INSERT INTO passage_text (rowid, asked, answered) VALUES (?, ?, ?)", (rowid, p.asked, p.answered)
        )
        return rowid

    def _extend_reply(self, rowid: int, reply: str) -> None:
        asked, answered = self._db.execute("SELECT asked, answered FROM passages WHERE id = ?", (rowid,)).fetchone()
        self._unindex(rowid, asked, answered)
        answered = f"{answered}\n{reply}" if answered else reply
        self._db.execute("UPDATE passages SET answered = ? WHERE id = ?", (answered, rowid))
        self._db.execute("INSERT INTO passage_text (rowid, asked, answered) VALUES (?, ?, ?)", (rowid, asked, answered))

    def _unindex(self, rowid: int, asked: str, answered: str) -> None:
        self._db.execute(
            "INSERT INTO passage_text (passage_text, rowid, asked, answered) VALUES ('delete', ?, ?, ?)",
            (rowid, asked, answered),
        )


class FileIndexes:
    """Each scope's index in an SQLite file of its own (`IndexHome`)."""

    def open(self, scope: str, path: Path) -> MemoryIndex:
        return MemoryIndex.open(path)

    def exists(self, scope: str, path: Path) -> bool:
        return path.exists()

    def delete(self, scope: str, path: Path) -> None:
        for name in (path.name, path.name + "-wal", path.name + "-shm"):
            (path.parent / name).unlink(missing_ok=True)

    def vectors(self, scope: str, path: Path, model: str) -> PassageVectors:
        return PassageVectors(path, model)


def _settle(db: sqlite3.Connection, unsettled: int) -> int:
    """After a write, in its transaction, with `unsettled` passages written since the index was last rewritten as one
    FTS5 segment: every search reads every segment and each write leaves one, so the index is rewritten while that
    is cheap (small, or grown by OPTIMIZE_SHARE since: a passage is rewritten a bounded number of times), else a few
    of its pages are merged. The passages written since the last rewrite, after this."""
    size = db.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
    if size <= OPTIMIZE_BELOW or unsettled >= OPTIMIZE_SHARE * size:
        db.execute("INSERT INTO passage_text (passage_text) VALUES ('optimize')")
        return 0
    db.execute("INSERT INTO passage_text (passage_text, rank) VALUES ('merge', ?)", (MERGE_PAGES,))
    return unsettled


def _stored(row: tuple[int, str, str, str, int, float, str, str, str]) -> StoredPassage:
    rowid, kind, session, log, first, ts, speaker, asked, answered = row
    return StoredPassage(rowid, session, log, Passage(kind, ts, speaker, asked, answered, first))


def _read_passages(db: sqlite3.Connection, ids: list[int]) -> Iterator[StoredPassage]:
    marks = ",".join("?" * len(ids))
    return map(_stored, db.execute(f"SELECT {_COLUMNS} FROM passages WHERE id IN ({marks})", ids))


def _neighbours(
    db: sqlite3.Connection,
    passages: Callable[[Iterable[int]], dict[int, StoredPassage]],
    found: StoredPassage,
    before: int,
    after: int,
) -> tuple[list[StoredPassage], list[StoredPassage]]:
    """Up to `before` exchanges before the passage (nearest first) and `after` after it: their ids from the log's
    index in one statement, the passages as kept (a search has read most of them already) or read."""
    key = (found.session, found.log, found.passage.first)
    rows = db.execute(_NEIGHBOURS, (*key, before, *key, after)).fetchall()
    stored = passages(rowid for rowid, _ in rows)
    first = found.passage.first
    return [stored[rowid] for rowid, at in rows if at < first], [stored[rowid] for rowid, at in rows if at > first]


class _ReadMarks:
    """The logs table, the marks and the highest passage id as last read, kept until a write (or another
    connection's) changes them."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._logs: dict[str, dict[str, tuple[Cursor, bool]]] | None = None
        self._marks: dict[str, str] | None = None
        self.top: int | None = None  # the highest passage id, likewise
        self.version = -1  # the connection's data_version when they were read

    def logs(self) -> dict[str, dict[str, tuple[Cursor, bool]]]:
        """Each session's logs: how far each was read, and whether it is the live one."""
        if self._logs is None:
            self._logs = {}
            for session, log, offset, count, live in self._db.execute(
                "SELECT session, log, offset, count, live FROM logs"
            ):
                self._logs.setdefault(session, {})[log] = (Cursor(log, offset, count), bool(live))
        return self._logs

    def marks(self) -> dict[str, str]:
        """Each source's read mark."""
        if self._marks is None:
            self._marks = dict(self._db.execute("SELECT name, value FROM marks").fetchall())
        return self._marks

    def forget(self) -> None:
        self._logs = None
        self._marks = None
        self.top = None


@contextmanager
def _transaction(db: sqlite3.Connection, kept: _ReadMarks) -> Iterator[None]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on an exception; what was kept of the read marks is read again after."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    finally:
        kept.forget()
    db.execute("COMMIT")
