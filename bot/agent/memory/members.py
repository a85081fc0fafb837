"""Which sessions feed a memory scope: `sessions.txt` beside its MEMORY.md, one session key a line.

The list is the one part of the index that session logs cannot tell again (a person's DMs on several
apps share a scope), so it lives with the memory files, on every worker's shared workspace.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

MEMBERS_FILE = "sessions.txt"
_HEADER = "# The chat sessions whose messages this memory's search index covers (one key a line).\n"


def members_file(directory: Path) -> Path:
    """Where a scope folder lists its sessions."""
    return directory / MEMBERS_FILE


def read_members(directory: Path) -> list[str]:
    """The session keys listed for a scope folder, in the order they joined (read again only when it changed)."""
    path = members_file(directory)
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return []
    return list(_members(path, found.st_mtime_ns, found.st_size))


@lru_cache(maxsize=64)  # the scopes active lately
def _members(path: Path, mtime_ns: int, size: int) -> tuple[str, ...]:
    text = path.read_text(encoding="utf-8")
    return tuple(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def add_member(directory: Path, key: str) -> None:
    """List a session key for a scope folder (one O_APPEND write, so concurrent writers never tear a line)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = members_file(directory)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        header = _HEADER if os.fstat(fd).st_size == 0 else ""
        os.write(fd, f"{header}{key}\n".encode())
    finally:
        os.close(fd)


def scope_of_session(memory_root: Path, key: str) -> Path | None:
    """The scope folder under `memory_root` whose list names session `key`, if one does."""
    for path in sorted(memory_root.rglob(MEMBERS_FILE)):
        if key in read_members(path.parent):
            return path.parent
    return None


def scope_folders(memory_root: Path) -> list[Path]:
    """Every scope folder under `memory_root` that has memory files or a session list."""
    names = ("MEMORY.md", "HISTORY.md", MEMBERS_FILE)
    found = {path.parent for name in names for path in memory_root.rglob(name)}
    return sorted(found)
