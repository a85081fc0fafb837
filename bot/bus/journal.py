"""The SQLite journal under the local bus: inbox and outbox rows, each change one small WAL transaction."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path

from bot.bus.contract import BusStats
from bot.bus.dead_letters import DeadLetter, Revived, drop_dead, format_age, list_dead, oldest_dead, revive
from bot.bus.messages import (
    InboundMessage,
    OutboundMessage,
    inbound_from_json,
    inbound_to_json,
    outbound_from_json,
    outbound_to_json,
)
from bot.storage.sqlite import open_store, transaction

CRASH_LIMIT = 2
PAGE_CACHE_KIB = 128  # SQLite's page cache (default 2 MB) fills as the file grows, in RSS tracemalloc never sees; the
# pages each message touches (the tables' and indexes' last pages, one id's) fit, the rest a read from the OS's cache
RETENTION = 7 * 86400.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS inbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    dedupe TEXT UNIQUE,
    body TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    starts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    body TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    chunks_sent INTEGER NOT NULL DEFAULT 0,
    ambiguous INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    updated REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS inbox_state ON inbox (state, seq);
CREATE INDEX IF NOT EXISTS outbox_state ON outbox (state, seq);
"""
_ADDED_COLUMNS = (("inbox", "error", "TEXT"), ("outbox", "attempts", "INTEGER NOT NULL DEFAULT 0"))
"""Columns a journal written by an older relaybot lacks, added when it is opened."""
FINISHED = "state NOT IN ('pending', 'failed')"
"""Rows retention may forget: dead letters stay until an operator retries or drops them."""


def _add_missing_columns(db: sqlite3.Connection) -> None:
    for table, column, kind in _ADDED_COLUMNS:
        if column not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


def _each(db: sqlite3.Connection, sql: str, rows: Sequence[tuple[object, ...]]) -> None:
    """The statement once per row: in one transaction when there are several, alone for one (a statement is atomic
    by itself, and BEGIN and COMMIT would cost more than it)."""
    if len(rows) > 1:
        with transaction(db):
            db.executemany(sql, rows)
    elif rows:
        db.execute(sql, rows[0])


def dedupe_key(message: InboundMessage) -> str | None:
    """What makes a platform redelivery recognisable: the chat and the platform's message id."""
    if message.platform_message_id is None:
        return None
    return f"{message.chat.session_key}/{message.platform_message_id}"


class Journal:
    """Inbox and outbox in one SQLite file (`:memory:` for a bus that need not survive the process)."""

    def __init__(self, path: Path | str = ":memory:", clock: Callable[[], float] = time.time) -> None:
        self._path = str(path)
        self._clock = clock
        self._db: sqlite3.Connection | None = None
        self._chunks: dict[str, int] = {}  # chunks confirmed of the outbound rows this process journaled, until sent

    def open(self) -> None:
        """Open (creating) the file in WAL mode; forget finished rows past the retention."""
        db = open_store(self._path, cache=True, threads=True)
        db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
        db.executescript(_SCHEMA)
        _add_missing_columns(db)
        cutoff = self._now() - RETENTION
        with transaction(db):
            db.execute(f"DELETE FROM inbox WHERE {FINISHED} AND updated < ?", (cutoff,))
            db.execute(f"DELETE FROM outbox WHERE {FINISHED} AND updated < ?", (cutoff,))
        self._db = db

    def close(self) -> None:
        self._chunks.clear()
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        assert self._db is not None, "journal is not open"
        return self._db

    def _now(self) -> float:
        return self._clock()

    def add_inbound(self, message: InboundMessage) -> bool:
        """Insert a pending message; False when its id or platform id is already journaled."""
        cursor = self.db.execute(
            "INSERT OR IGNORE INTO inbox (id, dedupe, body, updated) VALUES (?, ?, ?, ?)",
            (message.id, dedupe_key(message), inbound_to_json(message), self._now()),
        )
        return cursor.rowcount == 1

    def begin_inbound(self, ids: Sequence[str]) -> None:
        _each(self.db, "UPDATE inbox SET starts = starts + 1 WHERE id = ?", [(i,) for i in ids])

    def set_inbound(self, ids: Sequence[str], state: str, error: str | None = None) -> None:
        """Move messages to `done`, `failed` (with why) or back to `pending` (uncounting their last start)."""
        now = self._now()
        if state == "pending":
            _each(
                self.db,
                "UPDATE inbox SET starts = max(starts - 1, 0), updated = ? WHERE id = ? AND state = 'pending'",
                [(now, i) for i in ids],
            )
        else:
            _each(
                self.db,
                "UPDATE inbox SET state = ?, error = ?, updated = ? WHERE id = ?",
                [(state, error, now, i) for i in ids],
            )

    def fail_inbound(self, ids: Sequence[str], reason: str, apology: OutboundMessage | None) -> bool:
        """Make these messages dead letters with `reason` and journal the apology, in one transaction; whether the
        apology is new (False when this message was apologised for before)."""
        now = self._now()
        with transaction(self.db):
            self.db.executemany(
                "UPDATE inbox SET state = 'failed', error = ?, updated = ? WHERE id = ?",
                [(reason, now, i) for i in ids],
            )
            if apology is None:
                return False
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO outbox (id, body, updated) VALUES (?, ?, ?)",
                (apology.id, outbound_to_json(apology), now),
            )
        if cursor.rowcount == 1:
            self._chunks[apology.id] = 0
        return cursor.rowcount == 1

    def pending_inbound(self) -> tuple[list[InboundMessage], list[InboundMessage]]:
        """Pending messages in arrival order, split into (to run again, crashed the process too often)."""
        rows = self.db.execute("SELECT body, starts FROM inbox WHERE state = 'pending' ORDER BY seq").fetchall()
        again = [inbound_from_json(body) for body, starts in rows if starts < CRASH_LIMIT]
        failed = [inbound_from_json(body) for body, starts in rows if starts >= CRASH_LIMIT]
        return again, failed

    def add_outbound(self, message: OutboundMessage, completes: Sequence[str]) -> bool:
        """Journal a message and complete inbound ones in one transaction; False for a known id."""
        now = self._now()
        row = (message.id, outbound_to_json(message), now)
        with transaction(self.db) if completes else nullcontext():
            cursor = self.db.execute("INSERT OR IGNORE INTO outbox (id, body, updated) VALUES (?, ?, ?)", row)
            self.db.executemany(
                "UPDATE inbox SET state = 'done', updated = ? WHERE id = ?", [(now, i) for i in completes]
            )
        if cursor.rowcount == 1:
            self._chunks[message.id] = 0
        return cursor.rowcount == 1

    def pending_outbound(self) -> list[OutboundMessage]:
        rows = self.db.execute("SELECT body FROM outbox WHERE state = 'pending' ORDER BY seq").fetchall()
        return [outbound_from_json(body) for (body,) in rows]

    def chunks_sent(self, message_id: str) -> int:
        if (known := self._chunks.get(message_id)) is not None:
            return known
        row = self.db.execute("SELECT chunks_sent FROM outbox WHERE id = ?", (message_id,)).fetchone()
        return int(row[0]) if row else 0

    def mark_chunk_sent(self, message_id: str, index: int) -> None:
        self.db.execute(
            "UPDATE outbox SET chunks_sent = max(chunks_sent, ?), updated = ? WHERE id = ?",
            (index + 1, self._now(), message_id),
        )
        if message_id in self._chunks:
            self._chunks[message_id] = max(self._chunks[message_id], index + 1)

    def set_outbound(self, message_id: str, state: str, error: str | None = None) -> None:
        """Record a message `sent`, or `failed` with why (a dead letter, after at least one round of sends)."""
        self._chunks.pop(message_id, None)
        self.db.execute(
            "UPDATE outbox SET state = ?, error = ?, attempts = max(attempts, ? = 'failed'), updated = ? WHERE id = ?",
            (state, error, state, self._now(), message_id),
        )

    def defer_outbound(self, message_id: str, error: str) -> int:
        """A round of sends failed for a reason that passes: the message stays pending; the rounds failed so far."""
        self.db.execute(
            "UPDATE outbox SET attempts = attempts + 1, error = ?, updated = ? WHERE id = ?",
            (error, self._now(), message_id),
        )
        row = self.db.execute("SELECT attempts FROM outbox WHERE id = ?", (message_id,)).fetchone()
        return int(row[0]) if row else 0

    def dead_letters(self, chat: str | None = None) -> list[DeadLetter]:
        """Every dead letter, oldest first, optionally of one chat."""
        return list_dead(self.db, chat)

    def revive(self, ids: Sequence[str]) -> Revived:
        """Put dead letters back to pending; the messages to queue again."""
        return revive(self.db, ids, self._now())

    def drop_dead(self, ids: Sequence[str] = (), before: float | None = None) -> int:
        """Forget dead letters by id, or those that failed before `before`; how many."""
        return drop_dead(self.db, ids, before)

    def count_ambiguous(self, message_id: str) -> None:
        self.db.execute("UPDATE outbox SET ambiguous = ambiguous + 1 WHERE id = ?", (message_id,))

    def stats(self) -> BusStats:
        def count(sql: str) -> int:
            return int(self.db.execute(sql).fetchone()[0] or 0)

        return BusStats(
            inbound_pending=count("SELECT count(*) FROM inbox WHERE state = 'pending'"),
            inbound_failed=count("SELECT count(*) FROM inbox WHERE state = 'failed'"),
            outbound_pending=count("SELECT count(*) FROM outbox WHERE state = 'pending'"),
            outbound_failed=count("SELECT count(*) FROM outbox WHERE state = 'failed'"),
            ambiguous_sends=count("SELECT sum(ambiguous) FROM outbox"),
            oldest_dead=oldest_dead(self.db),
        )


def describe_journal(path: Path) -> str:
    """One line for `relaybot status`: pending and failed counts, and sends that may have arrived twice."""
    if not path.exists():
        return "no journal yet"
    journal = Journal(path)
    journal.open()
    try:
        stats = journal.stats()
    finally:
        journal.close()
    return describe_stats(stats, time.time())


def describe_stats(stats: BusStats, now: float) -> str:
    """Pending and failed counts, sends that may have arrived twice, and how long the oldest dead letter waits."""
    line = (
        f"{stats.inbound_pending} messages pending, {stats.inbound_failed} failed; "
        f"{stats.outbound_pending} replies unsent, {stats.outbound_failed} undeliverable; "
        f"{stats.ambiguous_sends} ambiguous sends (may have arrived twice)"
    )
    if stats.oldest_dead is None:
        return line
    waited = format_age(now - stats.oldest_dead)
    return f"{line}; {stats.dead_letters} dead letters, the oldest {waited} old (see `relaybot queue list`)"


def prune_journal(path: Path, before: float) -> int:
    """Forget finished inbox and outbox rows last changed before `before`, dead letters aside (safe beside a
    running gateway)."""
    if not path.exists():
        return 0
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            inbox = db.execute(f"DELETE FROM inbox WHERE {FINISHED} AND updated < ?", (before,)).rowcount
            outbox = db.execute(f"DELETE FROM outbox WHERE {FINISHED} AND updated < ?", (before,)).rowcount
        return inbox + outbox
    finally:
        db.close()
