"""System prompts of the chats active lately, reused while the files and settings they were made from stay the same."""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass

from bot.storage.recent import RecentMap

PROMPT_CACHE_SIZE = 64  # chats active lately; another's prompt costs a few file reads to make again

Stamp = tuple[int, int] | None


def stamp(path: str | os.PathLike[str]) -> Stamp:
    """The file's mtime and size, or None when it does not exist."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        return None
    return status.st_mtime_ns, status.st_size


@dataclass(frozen=True, slots=True)
class _Entry:
    paths: tuple[str, ...]
    stamps: tuple[Stamp, ...]
    inputs: tuple[object, ...]
    prompt: str


class SystemPromptCache:
    """At most `capacity` prompts, the least recently used dropped; one is reused while its files' mtimes and sizes
    and its other inputs (the memory's share, the skills section) are unchanged: a stat per file, no reads."""

    def __init__(self, capacity: int = PROMPT_CACHE_SIZE) -> None:
        self._entries: RecentMap[Hashable, _Entry] = RecentMap(capacity)

    @property
    def cached(self) -> int:
        """How many prompts are held."""
        return len(self._entries)

    def get(self, key: Hashable, inputs: tuple[object, ...]) -> str | None:
        """The prompt made for `key` from these inputs, when none of its files changed since; else None."""
        entry = self._entries.get(key)
        if entry is None or entry.inputs != inputs or tuple(map(stamp, entry.paths)) != entry.stamps:
            return None
        self._entries.touch(key)
        return entry.prompt

    def put(
        self, key: Hashable, paths: tuple[str, ...], stamps: tuple[Stamp, ...], inputs: tuple[object, ...], prompt: str
    ) -> None:
        """Keep a prompt made from the files at `paths` as they were at `stamps` (taken before they were read)."""
        self._entries[key] = _Entry(paths, stamps, inputs, prompt)
