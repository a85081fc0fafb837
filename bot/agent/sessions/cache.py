"""The part every session store shares: a bounded LRU of recently used sessions, trimmed to their tails."""

from __future__ import annotations

from collections import OrderedDict

from bot.agent.sessions.session import Session

DEFAULT_TAIL = 100
DEFAULT_MAX_SESSIONS = 500
DEFAULT_MAX_BYTES = 32 * 1024 * 1024


class SessionCache:
    """At most `max_sessions` sessions and about `max_bytes` of their messages, least recently used evicted.

    Each session keeps `tail` messages (the history window) plus whatever is not consolidated yet.
    """

    def __init__(self, tail: int, max_sessions: int, max_bytes: int) -> None:
        self._tail = tail
        self._max_sessions = max_sessions
        self._max_bytes = max_bytes
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._bytes = 0

    @property
    def cached(self) -> int:
        """How many sessions are in memory."""
        return len(self._sessions)

    @property
    def cached_bytes(self) -> int:
        """About how many bytes of messages the cached sessions hold."""
        return self._bytes

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool:
        """Whether these bus messages are already in the session (a turn run again after a crash)."""
        return bool(inbound_ids) and session.inbound_ids.issuperset(inbound_ids)

    def _lookup(self, key: str) -> Session | None:
        """The cached session, marked as just used; None when it is not cached."""
        session = self._sessions.get(key)
        if session is not None:
            self._sessions.move_to_end(key)
        return session

    def _remember(self, session: Session) -> None:
        """Cache a session (replacing any cached one of its key), evicting others past the bounds."""
        old = self._sessions.get(session.key)
        if old is not None:
            self._bytes -= old.size
        self._sessions[session.key] = session
        self._sessions.move_to_end(session.key)
        self._bytes += session.size
        self._evict(keep=session.key)

    def _forget(self, session: Session) -> None:
        """Drop a session from the cache, if it is the cached one of its key."""
        if self._sessions.get(session.key) is session:
            del self._sessions[session.key]
            self._bytes -= session.size

    def _grow(self, session: Session, size: int) -> None:
        session.size += size
        if self._sessions.get(session.key) is session:
            self._bytes += size
            self._evict(keep=session.key)

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

    def _evict(self, keep: str) -> None:
        while len(self._sessions) > 1 and (len(self._sessions) > self._max_sessions or self._bytes > self._max_bytes):
            key, oldest = next(iter(self._sessions.items()))
            if key == keep:
                self._sessions.move_to_end(key)
                key, oldest = next(iter(self._sessions.items()))
            del self._sessions[key]
            self._bytes -= oldest.size
