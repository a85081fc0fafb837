"""The one way relaybot opens a SQLite store: a private file (0600, folder 0700), WAL, autocommit, a busy timeout."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bot.storage.private_file import PRIVATE_FILE_MODE, PRIVATE_FOLDER_MODE

BUSY_TIMEOUT = 10.0
"""Seconds a statement waits for another connection's lock (a CLI command beside the gateway) before it fails."""
IN_MEMORY = ":memory:"


def open_store(
    path: Path | str, *, busy_timeout: float = BUSY_TIMEOUT, cache: bool = False, threads: bool = False
) -> sqlite3.Connection:
    """A connection to the store at `path`, made if missing; `cache` trades the last commits before a power cut for
    fewer syncs (synchronous=NORMAL: for what can be rebuilt or lost), `threads` lets other threads use it (the
    caller then holds a lock)."""
    if str(path) != IN_MEMORY:  # os.path: Path(path) would intern each part again (see bot.storage.chat_paths)
        os.makedirs(os.path.dirname(os.path.abspath(path)), mode=PRIVATE_FOLDER_MODE, exist_ok=True)
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE_MODE))
    db = sqlite3.connect(path, timeout=busy_timeout, isolation_level=None, check_same_thread=not threads)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        if cache:
            db.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.DatabaseError:
        db.close()  # not a database, or a corrupt one: the caller says what that means for its store
        raise
    return db


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction on an autocommit connection from `open_store`: all its statements or none, in one WAL
    commit (`with db:` alone neither begins one nor groups the statements)."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    db.commit()
