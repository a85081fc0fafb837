"""File records: every file a chat receives or makes gets an id, a name, a type, a size and a date, per scope."""

from __future__ import annotations

import mimetypes
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from bot.storage.sqlite import open_store

Origin = Literal["received", "made"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    mime_type TEXT NOT NULL,
    size INTEGER NOT NULL,
    created_at REAL NOT NULL,
    path TEXT NOT NULL,
    origin TEXT NOT NULL,
    UNIQUE (scope, path)
);
CREATE INDEX IF NOT EXISTS files_by_scope ON files (scope, created_at);
"""
_COLUMNS = "id, scope, name, mime_type, size, created_at, path, origin"


@dataclass(frozen=True, slots=True)
class FileRecord:
    """One file of one scope: what the model calls it by (`id`) and where it lies (`path`)."""

    id: str
    scope: str
    name: str
    mime_type: str
    size: int
    created_at: float
    path: Path
    origin: Origin


def scope_name(workspace: Path, directory: Path) -> str:
    """A scope's name in the book: its memory folder relative to the workspace (`memory/chats/telegram_5`)."""
    try:
        return str(directory.resolve().relative_to(workspace.resolve()))
    except ValueError:
        return str(directory)


def guess_type(name: str, given: str = "") -> str:
    """The MIME type a platform gave, or one guessed from the name when it gave none or a vague one."""
    if given and given != "application/octet-stream":
        return given
    return mimetypes.guess_type(name)[0] or given or "application/octet-stream"


class FileBook:
    """The records of every scope in one SQLite file (`state_dir/files.db`); lookups never cross scopes.

    Paths under `root` (the workspace) are stored relative to it, so a restored backup in another home still finds
    its files.
    """

    def __init__(self, path: Path, root: Path | None = None, clock: Callable[[], float] = time.time) -> None:
        self._root = root.resolve() if root is not None else None
        self._db = open_store(path, threads=True)
        self._lock = threading.Lock()
        self._clock = clock
        with self._lock:
            self._db.executescript(_SCHEMA)

    def register(
        self, scope: str, path: Path, name: str | None = None, mime_type: str = "", origin: Origin = "received"
    ) -> FileRecord:
        """The record of `path` in `scope`, made on first sight: registering the same file again returns it."""
        path = path.resolve()
        stored = self._stored(path)
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM files WHERE scope = ? AND path = ?", (scope, stored)
            ).fetchone()
            if row is not None:
                return self._record(row)
            name = name or path.name
            record = FileRecord(
                "f_" + secrets.token_hex(4),
                scope,
                name,
                guess_type(name, mime_type),
                path.stat().st_size,
                self._clock(),
                path,
                origin,
            )
            self._db.execute(
                f"INSERT INTO files ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.id, scope, record.name, record.mime_type, record.size, record.created_at, stored, origin),
            )
            return record

    def get(self, scope: str, file_id: str) -> FileRecord | None:
        """The file `file_id` of `scope`; None when it is unknown, gone from disk, or another scope's."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM files WHERE scope = ? AND id = ?", (scope, file_id.strip())
            ).fetchone()
        record = self._record(row) if row is not None else None
        return record if record is not None and record.path.is_file() else None

    def listing(self, scope: str, limit: int = 200) -> list[FileRecord]:
        """The scope's files still on disk, newest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM files WHERE scope = ? ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (scope, limit),
            ).fetchall()
        return [record for record in map(self._record, rows) if record.path.is_file()]

    def prune(self, before: float) -> int:
        """Delete the records made before `before` and their files; how many went."""
        with self._lock:
            rows = self._db.execute("SELECT path FROM files WHERE created_at < ?", (before,)).fetchall()
            for (path,) in rows:
                self._path(path).unlink(missing_ok=True)
            self._db.execute("DELETE FROM files WHERE created_at < ?", (before,))
        return len(rows)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _stored(self, path: Path) -> str:
        """How a path is kept: relative to the root when it is inside."""
        if self._root is not None and path.is_relative_to(self._root):
            return str(path.relative_to(self._root))
        return str(path)

    def _path(self, stored: str) -> Path:
        return self._root / stored if self._root is not None else Path(stored)

    def _record(self, row: tuple[Any, ...]) -> FileRecord:
        file_id, scope, name, mime_type, size, created_at, path, origin = row
        made = cast(Origin, origin)
        return FileRecord(
            str(file_id), str(scope), str(name), str(mime_type), int(size), float(created_at), self._path(path), made
        )
