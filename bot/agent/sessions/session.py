"""A session: one conversation's recent messages and totals; and what the agent needs from a store of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass
class Session:
    """A conversation's recent messages and running totals, mirrored in its store (a JSONL file, or Redis).

    `messages` holds the messages from absolute index `base` on (older ones stay in the store);
    `consolidated` and `total` are absolute message counts. `path` is the session's file on the local store.
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

    @property
    def total(self) -> int:
        """How many messages the session has, stored and in memory."""
        return self.base + len(self.messages)

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The last unconsolidated messages, at most `limit`, never splitting a tool call from its results."""
        start = max(self.consolidated, self.total - limit, self.base)
        return pair_safe(self.messages[start - self.base :])


def pair_safe(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop what would break tool pairing: a leading non-user tail, orphan results, unanswered calls."""
    first_user = next((i for i, m in enumerate(messages) if m.get("role") == "user"), len(messages))
    messages = messages[first_user:]
    safe: list[dict[str, Any]] = []
    i = 0
    count = len(messages)
    while i < count:
        message = messages[i]
        role = message.get("role")
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            wanted = {call["id"] for call in calls}
            j = i + 1
            results = []
            while j < count and messages[j].get("role") == "tool":
                results.append(messages[j])
                j += 1
            if {r.get("tool_call_id") for r in results} >= wanted:
                safe.append(message)
                safe.extend(r for r in results if r.get("tool_call_id") in wanted)
            i = j
            continue
        if role != "tool":
            safe.append(message)
        i += 1
    return safe


class Sessions(Protocol):
    """A session store as the agent loop, consolidation, sub-agents, the dashboard and the web chat use it."""

    def get(self, key: str) -> Session: ...

    async def load(self, key: str) -> Session: ...

    def recent(self, key: str, limit: int) -> list[dict[str, Any]]: ...

    def append(
        self, session: Session, messages: list[dict[str, Any]], inbound_ids: list[str] | None = None
    ) -> None: ...

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool: ...

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None: ...

    def mark_consolidated(self, session: Session, upto: int) -> None: ...

    def sync_consolidated(self, session: Session) -> None: ...

    async def load_unconsolidated(self, session: Session) -> None: ...

    def reset(self, key: str) -> Session: ...

    def summaries(self, since: float) -> list[dict[str, Any]]: ...

    def archived_messages(self, chat_key: str) -> list[tuple[float, str, str]]: ...
