"""Which sessions feed a memory scope: the one part of an index the session logs cannot tell again (a person's
DMs on several apps share a scope), so it is kept for good beside the sessions, never in the workspace.

A scope is named by its folder relative to the workspace (`memory`, `memory/chats/telegram_-5`), the same on
every machine; the local store keeps one list per scope under `state_dir/memory_scopes/`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Protocol

from bot.storage.recent import RecentMap

LIST_FILE = "sessions.txt"
CACHED_LISTS = 32  # the lists of the scopes active lately, read again only when they change


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
        self._read: RecentMap[str, tuple[int, int, list[str]]] = RecentMap(CACHED_LISTS)  # path -> mtime, size, keys

    def members(self, scope: str) -> list[str]:
        path = os.path.join(self._root, scope, LIST_FILE)
        try:
            found = os.stat(path)
        except FileNotFoundError:
            return []
        cached = self._read.get(path, fresh=True)
        if cached is not None and cached[:2] == (found.st_mtime_ns, found.st_size):
            return list(cached[2])
        fd = os.open(path, os.O_RDONLY)
        try:
            data = os.read(fd, found.st_size)
        finally:
            os.close(fd)
        keys = [line.strip() for line in data.decode("utf-8", errors="replace").splitlines() if line.strip()]
        self._read[path] = (found.st_mtime_ns, found.st_size, keys)
        return list(keys)

    def add(self, scope: str, key: str) -> None:
        folder = os.path.join(self._root, scope)  # os.path: pathlib would intern the scope's folder name
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(folder, LIST_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, f"{key}\n".encode())
        finally:
            os.close(fd)

    def scopes(self) -> list[str]:
        if not self._root.is_dir():
            return []
        return sorted(path.parent.relative_to(self._root).as_posix() for path in self._root.rglob(LIST_FILE))


def scope_of_session(members: ScopeMembers, key: str) -> str | None:
    """The scope whose list names session `key`, if one does."""
    return next((scope for scope in members.scopes() if key in members.members(scope)), None)
