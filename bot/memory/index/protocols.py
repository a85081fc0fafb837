"""What ranking reads of a scope's passages, and what semantic search needs of a vector store: the seams a backend
other than SQLite (Redis, say) implements. `store.MemoryIndex` and `vectors.PassageVectors` are the SQLite ones."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Protocol

from bot.memory.index.store import StoredPassage
from bot.memory.index.vectors import Pending


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

    def around(self, found: StoredPassage, before: int, after: int) -> list[StoredPassage]:
        """The passage with up to `before` and `after` exchanges of its log around it, in order."""
        ...

    def live_logs(self, chat: str) -> list[tuple[str, str, int]]:
        """(session, live log, messages read) of the session `chat` and of its threads."""
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
