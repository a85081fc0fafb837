"""The ledger: one SQLite row per model call (state_dir/usage.db), and sums over it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass, fields
from operator import attrgetter
from pathlib import Path
from typing import Any, Protocol

from bot.storage.sqlite import open_store
from bot.usage.charge import BACKGROUND

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    session_key TEXT,
    sender TEXT,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_tokens INTEGER NOT NULL,
    cost_usd REAL,
    estimated INTEGER NOT NULL,
    latency REAL NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS calls_by_sender ON calls (sender, ts);
CREATE INDEX IF NOT EXISTS calls_by_time ON calls (ts);
"""
PAGE_CACHE_KIB = 128  # SQLite's page cache (default 2 MB) fills as the file grows, in RSS tracemalloc never sees; the
# pages each call touches (the table's and indexes' last pages, one sender's) fit, the rest a read from the OS's cache
GROUPS = {"sender": "sender", "chat": "session_key", "model": "model", "purpose": "purpose"}


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call: who, why, which model, what it used and cost (None = unknown price), how it ended."""

    ts: float
    session_key: str | None
    sender: str | None
    purpose: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float | None
    estimated: bool
    latency: float
    outcome: str


_ROW = attrgetter(*CallRecord.__slots__)  # a record's values in column order, in one call
_INSERT = f"INSERT INTO calls ({', '.join(CallRecord.__slots__)}) VALUES ({', '.join('?' * len(CallRecord.__slots__))})"


@dataclass(frozen=True, slots=True)
class Totals:
    """Sums over a set of calls; `cost_usd` is None when no call had a known price."""

    key: str | None
    calls: int
    tokens_in: int
    tokens_out: int
    cost_usd: float | None

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class Ledger(Protocol):
    """Where call records go and sums come from: SQLite (`UsageLedger`) or Redis (`RedisUsageLedger`)."""

    def record(self, call: CallRecord) -> None: ...
    def totals(
        self, since: float, sender: str | None = None, session_key: str | None = None, background: bool = False
    ) -> Totals: ...
    def grouped(self, by: str, since: float) -> list[Totals]: ...
    def daily(self, since: float, offset_seconds: float) -> list[tuple[int, int]]: ...
    def calls(self, since: float = 0.0) -> list[CallRecord]: ...
    def close(self) -> None: ...


class UsageLedger:
    """Appends call records and answers sums by sender, period or group; safe across threads."""

    def __init__(self, path: Path) -> None:
        self._db = open_store(
            path, cache=True, threads=True
        )  # WAL stays consistent; a power cut may lose the last rows
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
            self._db.executescript(_SCHEMA)

    def record(self, call: CallRecord) -> None:
        """Append one call."""
        with self._lock:
            self._db.execute(_INSERT, _ROW(call))

    def totals(
        self, since: float, sender: str | None = None, session_key: str | None = None, background: bool = False
    ) -> Totals:
        """Sums since `since` for a sender, a chat, background work (no sender), or everything."""
        where = ["ts >= ?"]
        args: list[object] = [since]
        if sender is not None:
            where.append("sender = ?")
            args.append(sender)
        if session_key is not None:
            where.append("session_key = ?")
            args.append(session_key)
        if background:
            where.append(f"sender IS NULL AND purpose IN ({', '.join(repr(p) for p in sorted(BACKGROUND))})")
        row = self._query(f"{_SUMS} FROM calls WHERE {' AND '.join(where)}", args)[0]
        return Totals(None, *row)

    def grouped(self, by: str, since: float) -> list[Totals]:
        """Sums since `since` grouped by sender, chat, model or purpose, biggest spenders first."""
        column = GROUPS[by]
        rows = self._query(
            f"SELECT {column}, {_SUMS[len('SELECT ') :]} FROM calls WHERE ts >= ? GROUP BY {column} "
            "ORDER BY SUM(prompt_tokens + completion_tokens) DESC",
            [since],
        )
        return [Totals(*row) for row in rows]

    def daily(self, since: float, offset_seconds: float) -> list[tuple[int, int]]:
        """(day number, tokens) since `since`, days counted in local time given its UTC offset."""
        rows = self._query(
            "SELECT CAST((ts + ?) / 86400 AS INTEGER) AS day, SUM(prompt_tokens + completion_tokens) "
            "FROM calls WHERE ts >= ? GROUP BY day ORDER BY day",
            [offset_seconds, since],
        )
        return [(int(day), int(tokens)) for day, tokens in rows]

    def calls(self, since: float = 0.0) -> list[CallRecord]:
        """Every call since `since`, oldest first."""
        columns = [f.name for f in fields(CallRecord)]
        rows = self._query(f"SELECT {', '.join(columns)} FROM calls WHERE ts >= ? ORDER BY id", [since])
        records = [dict(zip(columns, row, strict=True)) for row in rows]
        return [CallRecord(**{**record, "estimated": bool(record["estimated"])}) for record in records]  # stored 0/1

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _query(self, sql: str, args: Iterable[object]) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, list(args)).fetchall()


_SUMS = "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), SUM(cost_usd)"


def prune_ledger(path: Path, before: float) -> int:
    """Delete the calls recorded before `before` from the ledger file (safe beside a running gateway); how many."""
    if not path.exists():
        return 0
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            return db.execute("DELETE FROM calls WHERE ts < ?", (before,)).rowcount
    finally:
        db.close()
