"""What ranking reads of a scope's passages, what catching up writes, where a scope's index is kept, and what semantic
search needs of a vector store: the seams a backend implements. `store.MemoryIndex`, `store.FileIndexes` and
`vectors.PassageVectors` are the SQLite ones; `redis.store.RedisIndex`, `redis.store.RedisIndexes` and
`redis.vectors.RedisVectors` the Redis ones."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from bot.memory.index.passages import ExchangePart, Passage
from bot.memory.index.store import StoredPassage
from bot.memory.index.vectors import Pending
from bot.sessions.logs import Cursor


class PassageIndex(Protocol):
    """A scope's passages as a search reads them: keyword hits, counts, lookups and each passage's neighbours."""

    path: Path  # where the index is kept: its vectors are found by it

    def keyword(
        self,
        expression: str,
        limit: int,
        since: float | None,
        until: float | None,
        leave_out: Sequence[tuple[str, str, int]] = (),
    ) -> list[tuple[int, float, float, str, str]]:
        """The best `limit` passages matching an FTS5-style expression: (id, score, time, asked, answered)."""
        ...

    def matching(self, expressions: Sequence[str]) -> tuple[list[int], int]:
        """How many passages match each expression, and about how many passages there are."""
        ...

    def passages(self, ids: Iterable[int]) -> dict[int, StoredPassage]:
        """The stored passages with these ids."""
        ...

    def around(self, found: Sequence[StoredPassage], before: int, after: int) -> list[list[StoredPassage]]:
        """Each passage with up to `before` and `after` exchanges of its log around it, in order (all at once: a
        backend across a network reads them in one round trip)."""
        ...

    def live_logs(self, chat: str) -> list[tuple[str, str, int]]:
        """(session, live log, messages read) of the session `chat` and of its threads."""
        ...


class ScopeIndex(PassageIndex, Protocol):
    """A scope's index as catching up and its owner use it: read marks, writes that check them, and upkeep."""

    def refresh(self) -> None:
        """Start a use of the index: read marks kept in memory are dropped if another process wrote since."""
        ...

    def cursors(self, session: str) -> dict[str, tuple[Cursor, bool]]:
        """Each known log of the session: how far it was read, and whether it is the live one."""
        ...

    def add_exchanges(
        self, session: str, parts: Sequence[ExchangePart], start: Cursor, end: Cursor, live: bool
    ) -> bool:
        """Store exchanges read from one log and its new cursor at once; False when its cursor is no longer `start`."""
        ...

    def mark_archived(self, session: str, log: str) -> None:
        """Note that a log is no longer the session's live one."""
        ...

    def drop_log(self, session: str, log: str) -> None:
        """Forget a log that no longer exists, with its passages."""
        ...

    def mark(self, name: str) -> str:
        """A source's read mark; "" when none."""
        ...

    def add_entries(
        self, passages: Iterable[Passage], mark: str, was: str, value: str, replace: str | None = None
    ) -> None:
        """Store passages and a source's new mark at once if its mark is still `was`; `replace` drops a kind first."""
        ...

    def clear(self) -> None:
        """Forget every passage and read mark."""
        ...

    def size(self) -> int:
        """How many passages the index holds."""
        ...

    def close(self) -> None:
        """Let go of what the index holds open."""
        ...


class IndexHome(Protocol):
    """Where each scope's index is kept: files under the state folder, or a Redis."""

    def open(self, scope: str, path: Path) -> ScopeIndex:
        """The index of scope `scope` (its file would be `path`); IndexUnusable when it is to be rebuilt."""
        ...

    def exists(self, scope: str, path: Path) -> bool:
        """Whether the scope has an index yet."""
        ...

    def delete(self, scope: str, path: Path) -> None:
        """Delete the scope's index (it is rebuilt from its sources on next use)."""
        ...

    def vectors(self, scope: str, path: Path, model: str) -> VectorStore:
        """The scope's passage vectors for one embedding model, kept beside its index."""
        ...


class VectorStore(Protocol):
    """A scope's passage vectors for one embedding model."""

    def pending(self, limit: int) -> list[Pending]:
        """Up to `limit` passages without a vector of their current text, oldest first."""
        ...

    def store(self, passages: Sequence[Pending], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the vectors of these passages."""
        ...

    def nearest(
        self, query: Sequence[float], limit: int, since: float | None, until: float | None, floor: float = -1.0
    ) -> list[int]:
        """The ids of the `limit` passages closest to `query`, best first."""
        ...

    def load(self) -> None:
        """Read the vectors other processes stored since the last read."""
        ...

    def close(self) -> None:
        """Let go of what the store holds open."""
        ...
