"""A session: one conversation's recent messages and totals; and what the agent needs from a store of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bot.sessions.archive import ArchivedSession
from bot.sessions.safe_history import SafeHistory


@dataclass(slots=True, weakref_slot=True)  # one per cached session: no __dict__ (about 300 bytes less)
class Session:
    """A conversation's recent messages and running totals, mirrored in its store (a JSONL file, or Redis).

    `messages` holds the messages from absolute index `base` on (older ones stay in the store);
    `consolidated` and `total` are absolute message counts. `path` is the session's file on the local store.
    `resumed` is the message count when /resume made the session live again (None when it never was).
    """

    key: str
    path: Path | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    consolidated: int = 0
    base: int = 0
    size: int = 0
    inbound_ids: set[str] = field(default_factory=set)
    resumed: int | None = None
    safe: SafeHistory = field(default_factory=SafeHistory, init=False, repr=False, compare=False)

    @property
    def total(self) -> int:
        """How many messages the session has, stored and in memory."""
        return self.base + len(self.messages)

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The last unconsolidated messages, at most `limit`, never splitting a tool call from its results.

        A new list each call; the walk behind it covers only the messages appended since the last call.
        A resumed session shows its consolidated messages too, as it did before it was archived, until
        consolidation moves past the point where it was resumed.
        """
        shown_from = 0 if self.resumed is not None and self.consolidated <= self.resumed else self.consolidated
        start = max(shown_from, self.total - limit, self.base)
        return self.safe.window(self.messages, self.base, start)


class Sessions(Protocol):
    """A session store as the agent loop, consolidation, sub-agents, the dashboard and the web chat use it."""

    def get(self, key: str) -> Session: ...

    async def load(self, key: str) -> Session: ...

    def recent(self, key: str, limit: int) -> list[dict[str, Any]]: ...

    def append(
        self,
        session: Session,
        messages: list[dict[str, Any]],
        inbound_ids: list[str] | None = None,
        usage: tuple[int, int] | None = None,
    ) -> None: ...

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool: ...

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None: ...

    def mark_consolidated(self, session: Session, upto: int) -> None: ...

    def sync_consolidated(self, session: Session) -> None: ...

    async def load_unconsolidated(self, session: Session) -> None: ...

    def reset(self, key: str) -> Session: ...

    def summaries(self, since: float) -> list[dict[str, Any]]: ...

    def archives(self, key: str) -> list[ArchivedSession]:
        """The session's archives (not its threads'), most recently active first."""
        ...

    def resume(self, key: str, archive_id: str) -> Session:
        """Make an archive the live session again, archiving the live one; return that one; KeyError when unknown."""
        ...
