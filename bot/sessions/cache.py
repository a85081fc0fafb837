"""The part every session store shares: a bounded LRU of recently used sessions, trimmed to their tails."""

from __future__ import annotations

import weakref
from collections.abc import Callable

from bot.sessions.session import Session
from bot.storage.recent import RecentMap

DEFAULT_TAIL = 100
DEFAULT_MAX_SESSIONS = 256  # a one-exchange session holds about 3.4 KB; a longer one is bounded by the bytes
DEFAULT_MAX_BYTES = 32 * 1024 * 1024


class SessionCache:
    """At most `max_sessions` sessions and about `max_bytes` of their messages, least recently used evicted.

    Each session keeps `tail` messages (the history window) plus whatever is not consolidated yet.
    """

    def __init__(self, tail: int, max_sessions: int, max_bytes: int) -> None:
        self._tail = tail
        self._sessions: RecentMap[str, Session] = RecentMap(
            max_sessions, weight=lambda session: session.size, max_weight=max_bytes
        )
        # Every session object still in use, cached or not (a background consolidation holds an archived one):
        # when /new or /resume moves a session's file or keys, each copy is pointed at where it now lives.
        self._in_use: weakref.WeakValueDictionary[int, Session] = weakref.WeakValueDictionary()

    @property
    def cached(self) -> int:
        """How many sessions are in memory."""
        return len(self._sessions)

    @property
    def cached_bytes(self) -> int:
        """About how many bytes of messages the cached sessions hold."""
        return self._sessions.total_weight

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool:
        """Whether these bus messages are already in the session (a turn run again after a crash)."""
        return bool(inbound_ids) and session.inbound_ids.issuperset(inbound_ids)

    def _lookup(self, key: str) -> Session | None:
        """The cached session, marked as just used; None when it is not cached."""
        return self._sessions.get(key, fresh=True)

    def _remember(self, session: Session) -> None:
        """Cache a session (replacing any cached one of its key), evicting others past the bounds."""
        self._sessions[session.key] = session
        self._in_use[id(session)] = session

    def _copies(self, where: Callable[[Session], bool]) -> list[Session]:
        """The session objects in use that `where` picks (those of one file or set of keys)."""
        return [session for session in list(self._in_use.values()) if where(session)]

    def _forget(self, session: Session) -> None:
        """Drop a session from the cache, if it is the cached one of its key."""
        if self._sessions.get(session.key) is session:
            self._sessions.pop(session.key)

    def _grow(self, session: Session, size: int) -> None:
        session.size += size
        if self._sessions.get(session.key) is session:
            self._sessions.reweigh(session.key)

    def _trim(self, session: Session) -> None:
        """Forget in-memory messages that are both consolidated and older than the tail."""
        keep_from = min(session.consolidated, session.total - self._tail)
        drop = keep_from - session.base
        if drop < max(self._tail, 64):
            return
        freed = session.size * drop // len(session.messages)  # sizes are line lengths: an even share per message
        del session.messages[:drop]
        session.base = keep_from
        self._grow(session, -freed)
