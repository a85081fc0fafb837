"""Copying a live folder consistently: SQLite files through the online backup API, every other file as it is."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path

logger = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
SIDE_FILES = ("-wal", "-shm", "-journal")  # the online backup carries their content into the copy
SKIPPED_NAMES = {"control.sock", "gateway.lock"}
SKIPPED_DIRS = {"logs", "backups"}
BUSY_TIMEOUT = 30.0


def is_sqlite(path: Path) -> bool:
    """Whether `path` starts with SQLite's file header."""
    with path.open("rb") as file:
        return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def copy_sqlite(source: Path, target: Path) -> None:
    """A consistent copy of a database another process may be writing, through SQLite's online backup API."""
    live = sqlite3.connect(source, timeout=BUSY_TIMEOUT)
    copy = sqlite3.connect(target)
    try:
        live.backup(copy)
        copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file in the archive
    finally:
        copy.close()
        live.close()


def copy_plain(source: Path, target: Path) -> None:
    """Copy a file; a JSONL log loses a last line still being written, so every line of the copy is whole."""
    data = source.read_bytes()
    if source.suffix == ".jsonl" and data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
    target.write_bytes(data)


def files_to_copy(root: Path, skip_dirs: frozenset[str] = frozenset()) -> Iterator[Path]:
    """Every regular file under `root` a backup keeps, in a stable order (no logs, sockets, locks or WAL files)."""
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if relative.parts[0] in SKIPPED_DIRS | skip_dirs or path.is_symlink() or not path.is_file():
            continue
        if path.name in SKIPPED_NAMES or path.name.endswith(SIDE_FILES):
            continue
        yield path


def snapshot_folder(root: Path, target: Path, skip_dirs: frozenset[str] = frozenset()) -> int:
    """Copy `root` into `target` (databases online, the rest as files); return how many files were copied."""
    copied = 0
    for path in files_to_copy(root, skip_dirs):
        destination = target / path.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            if is_sqlite(path):
                copy_sqlite(path, destination)
            else:
                copy_plain(path, destination)
        except FileNotFoundError:
            logger.info("backup: %s went away while copying; left out", path)
            continue
        copied += 1
    return copied
