"""Which sessions feed a memory scope: the one part of an index the session logs cannot tell again (a person's
DMs on several apps share a scope), so it is kept for good beside the sessions, never in the workspace.

A scope is named by its folder relative to the workspace (`memory`, `memory/chats/telegram_-5`), the same on
every machine; the local store keeps one list per scope under `state_dir/memory_scopes/`.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Protocol

LIST_FILE = "sessions.txt"


class ScopeMembers(Protocol):
    """The sessions listed for each scope; safe to call from a worker thread."""

    def members(self, scope: str) -> list[str]:
        """The session keys listed for a scope, in the order they joined."""

    def add(self, scope: str, key: str) -> None:
        """List a session key for a scope."""

    def scopes(self) -> list[str]:
        """Every scope with a list."""


class FileMembers:
    """One `sessions.txt` per scope under a folder of the state directory; appends are single O_APPEND writes."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def members(self, scope: str) -> list[str]:
        path = self._root / scope / LIST_FILE
        try:
            found = os.stat(path)
        except FileNotFoundError:
            return []
        return list(_listed(path, found.st_mtime_ns, found.st_size))

    def add(self, scope: str, key: str) -> None:
        folder = self._root / scope
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(folder / LIST_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{key}\n".encode())
        finally:
            os.close(fd)

    def scopes(self) -> list[str]:
        if not self._root.is_dir():
            return []
        return sorted(path.parent.relative_to(self._root).as_posix() for path in self._root.rglob(LIST_FILE))


@lru_cache(maxsize=64)  # the scopes active lately; a list is read again only when it changed
def _listed(path: Path, mtime_ns: int, size: int) -> tuple[str, ...]:
    return tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def scope_of_session(members: ScopeMembers, key: str) -> str | None:
    """The scope whose list names session `key`, if one does."""
    return next((scope for scope in members.scopes() if key in members.members(scope)), None)
