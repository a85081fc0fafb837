"""The approvals' allow list: commands and paths an owner chose to *Allow always*, in a SQLite file (0600)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Protocol

from bot.storage.sqlite import open_store


class AllowList(Protocol):
    """Exact commands (`exec`) and file changes (`write_file notes/x`) that no longer ask; shared by all processes."""

    def allows(self, subject: str) -> bool: ...
    def add(self, subject: str) -> None: ...
    def remove(self, subject: str) -> bool: ...
    def entries(self) -> list[str]: ...


class LocalAllowList:
    """The allow list in one SQLite file of the state folder, safe to share between the processes of one home."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def allows(self, subject: str) -> bool:
        """Whether an owner allowed exactly this command or change for good."""
        if not self._path.exists():
            return False
        with self._connect() as db:
            return db.execute("SELECT 1 FROM allowed WHERE subject = ?", (subject,)).fetchone() is not None

    def add(self, subject: str) -> None:
        """Allow `subject` from now on (adding it twice keeps one entry)."""
        with self._connect() as db:
            db.execute("INSERT OR IGNORE INTO allowed (subject) VALUES (?)", (subject,))

    def remove(self, subject: str) -> bool:
        """Ask about `subject` again; False when it was not allowed."""
        if not self._path.exists():
            return False
        with self._connect() as db:
            return db.execute("DELETE FROM allowed WHERE subject = ?", (subject,)).rowcount > 0

    def entries(self) -> list[str]:
        """Everything allowed, sorted."""
        if not self._path.exists():
            return []
        with self._connect() as db:
            return [row[0] for row in db.execute("SELECT subject FROM allowed ORDER BY subject")]

    def _connect(self) -> sqlite3.Connection:
        db = open_store(self._path)
        db.execute("CREATE TABLE IF NOT EXISTS allowed (subject TEXT PRIMARY KEY)")
        return db
