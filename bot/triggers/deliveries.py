"""The deliveries each trigger took, kept in SQLite under the state folder: a delivery id is known across restarts."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.storage.private_file import PRIVATE_FOLDER_MODE

_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries (
    trigger TEXT NOT NULL,
    delivery TEXT NOT NULL,
    run_id TEXT,
    event TEXT NOT NULL,
    accepted_at INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    PRIMARY KEY (trigger, delivery)
);
CREATE INDEX IF NOT EXISTS deliveries_latest ON deliveries (trigger, accepted_at);
CREATE INDEX IF NOT EXISTS deliveries_run ON deliveries (run_id);
"""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivery a trigger answered: its run (None for a ping or an ignored event), when, and how it went."""

    trigger: str
    delivery: str
    run_id: str | None
    event: str
    accepted_at: int  # epoch milliseconds
    outcome: str


class Deliveries(Protocol):
    """Every delivery by trigger and delivery id (SQLite in this home, or Redis shared by the gateways)."""

    def known(self, trigger: str, delivery: str) -> Delivery | None:
        """The delivery as first taken, or None when this id is new."""

    def take(self, trigger: str, delivery: str, run_id: str | None, event: str, outcome: str) -> Delivery:
        """Record a delivery (the first record of an id wins) and return the one recorded."""

    def finish(self, run_id: str, outcome: str) -> None:
        """Note how a delivery's run ended."""

    def last(self, trigger: str) -> Delivery | None:
        """The trigger's latest delivery, or None before its first."""

    def close(self) -> None:
        """Release the store."""


def deliveries_path(state_dir: Path) -> Path:
    """Where the deliveries are kept."""
    return state_dir / "triggers.db"


def prune_deliveries(path: Path, before: float) -> int:
    """Forget the deliveries taken before `before` (epoch seconds); how many went (none when there is no file)."""
    if not path.exists():
        return 0
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            return db.execute("DELETE FROM deliveries WHERE accepted_at < ?", (int(before * 1000),)).rowcount
    finally:
        db.close()


class DeliveryBook:
    """Every delivery by trigger and delivery id; a row is written before the sender hears 202."""

    def __init__(self, path: Path, clock: Callable[[], float] = time.time) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER_MODE)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()
        self._clock = clock

    def close(self) -> None:
        """Close the file."""
        self._db.close()

    def known(self, trigger: str, delivery: str) -> Delivery | None:
        """The delivery as first taken, or None when this id is new."""
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM deliveries WHERE trigger = ? AND delivery = ?", (trigger, delivery)
            ).fetchone()
        return Delivery(*row) if row else None

    def take(self, trigger: str, delivery: str, run_id: str | None, event: str, outcome: str) -> Delivery:
        """Record a delivery (the first record of an id wins) and return the one recorded."""
        now = int(self._clock() * 1000)
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO deliveries VALUES (?, ?, ?, ?, ?, ?)",
                (trigger, delivery, run_id, event, now, outcome),
            )
        found = self.known(trigger, delivery)
        assert found is not None
        return found

    def finish(self, run_id: str, outcome: str) -> None:
        """Note how a delivery's run ended."""
        with self._lock:
            self._db.execute("UPDATE deliveries SET outcome = ? WHERE run_id = ?", (outcome, run_id))

    def last(self, trigger: str) -> Delivery | None:
        """The trigger's latest delivery, or None before its first."""
        with self._lock:
            row = self._db.execute(
                "SELECT * FROM deliveries WHERE trigger = ? ORDER BY accepted_at DESC, rowid DESC LIMIT 1", (trigger,)
            ).fetchone()
        return Delivery(*row) if row else None
