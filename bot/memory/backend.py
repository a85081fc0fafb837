"""What long-term memory needs from the backend the stores chose: files in this home, or Redis shared by processes."""

from __future__ import annotations

from dataclasses import dataclass

from bot.memory.index.catchup import Bulk
from bot.memory.index.protocols import IndexHome
from bot.memory.locks import ScopeLocks
from bot.memory.members import ScopeMembers
from bot.sessions.logs import SessionLogs


@dataclass(frozen=True, slots=True)
class MemoryBackend:
    """One writer per scope (consolidation), the session logs the indexes read, and each scope's session list;
    `local` when those are this machine's files (reading them never waits on the network); `bulk` indexes a big
    backlog in another process; `home` keeps the search indexes (None: SQLite files under the state folder)."""

    locks: ScopeLocks
    logs: SessionLogs
    members: ScopeMembers
    local: bool
    bulk: Bulk | None = None
    home: IndexHome | None = None
