"""Sessions: one append-only JSONL file per chat; a bounded cache of their recent tails, appended in O(1)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bot.agent.session_tail import SessionFile, read_tail

logger = logging.getLogger(__name__)

DEFAULT_TAIL = 100
DEFAULT_MAX_SESSIONS = 500
DEFAULT_MAX_BYTES = 32 * 1024 * 1024


@dataclass
class Session:
    """A conversation's recent messages and running totals, mirrored in its JSONL file.

    `messages` holds the messages from absolute index `base` on (older ones stay on disk);
    `consolidated` and `total` are absolute message counts.
    """

    key: str
    path: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    consolidated: int = 0
    base: int = 0
    size: int = 0
    inbound_ids: set[str] = field(default_factory=set)

    @property
    def total(self) -> int:
        """How many messages the session has, on disk and in memory."""
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
    while i < len(messages):
        message = messages[i]
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if calls:
            wanted = {call["id"] for call in calls}
            j = i + 1
            results = []
            while j < len(messages) and messages[j].get("role") == "tool":
                results.append(messages[j])
                j += 1
            if {r.get("tool_call_id") for r in results} >= wanted:
                safe.append(message)
                safe.extend(r for r in results if r.get("tool_call_id") in wanted)
            i = j
            continue
        if message.get("role") != "tool":
            safe.append(message)
        i += 1
    return safe


class SessionStore:
    """Loads a session's tail from the end of its file, keeps the recently used ones, appends each record as a line.

    The cache holds at most `max_sessions` sessions and about `max_bytes` of their messages,
    evicting the least recently used; an evicted session is read back from its file when needed.
    Each session keeps `tail` messages (the history window) plus whatever is not consolidated yet.
    """

    def __init__(
        self,
        directory: Path,
        tail: int = DEFAULT_TAIL,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        self._directory = directory
        self._tail = tail
        self._max_sessions = max_sessions
        self._max_bytes = max_bytes
        self._sessions: OrderedDict[str, Session] = OrderedDict()
        self._bytes = 0
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def cached(self) -> int:
        """How many sessions are in memory."""
        return len(self._sessions)

    @property
    def cached_bytes(self) -> int:
        """About how many bytes of messages the cached sessions hold."""
        return self._bytes

    def get(self, key: str) -> Session:
        """The session for a key, its tail read from disk when it is not cached."""
        session = self._sessions.get(key)
        if session is None:
            session = self._load(key, self._directory / f"{quote(key, safe='')}.jsonl")
            self._sessions[key] = session
            self._bytes += session.size
            self._evict(keep=key)
        else:
            self._sessions.move_to_end(key)
        return session

    def recent(self, key: str, limit: int) -> list[dict[str, Any]]:
        """The session's last `limit` messages, from the cache or else read from its file without caching."""
        session = self._sessions.get(key)
        if session is None:
            return read_tail(self._directory / f"{quote(key, safe='')}.jsonl", key, limit).messages[-limit:]
        return session.messages[-limit:]

    def append(self, session: Session, messages: list[dict[str, Any]], inbound_ids: list[str] | None = None) -> None:
        """Append messages to the session and its file in one write; `inbound_ids` names the bus messages they hold."""
        now = time.time()
        first = session.total
        lines = [{"type": "message", "ts": now, "n": first + i, "message": m} for i, m in enumerate(messages)]
        if inbound_ids:
            lines[0]["inbound"] = inbound_ids
            session.inbound_ids.update(inbound_ids)
        written = self._write(session.path, lines)
        session.messages.extend(messages)
        self._grow(session, written)
        self._trim(session)

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool:
        """Whether these bus messages are already in the session (a turn run again after a crash)."""
        return bool(inbound_ids) and session.inbound_ids.issuperset(inbound_ids)

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one LLM call's token counts to the session's totals."""
        session.prompt_tokens += prompt_tokens
        session.completion_tokens += completion_tokens
        record = {"type": "usage", "prompt": prompt_tokens, "completion": completion_tokens}
        record["totals"] = [session.prompt_tokens, session.completion_tokens]
        self._write(session.path, [record])

    def mark_consolidated(self, session: Session, upto: int) -> None:
        """Record that messages before `upto` now live in long-term memory."""
        self._write(session.path, [{"type": "consolidated", "upto": upto}])
        session.consolidated = upto
        current = self._sessions.get(session.key)
        if current is not None and current is not session and current.path == session.path:
            current.consolidated = max(current.consolidated, upto)  # the session was evicted and read back meanwhile
        self._trim(session)

    async def load_unconsolidated(self, session: Session) -> None:
        """Read back (in a thread) the unconsolidated messages older than the tail, for consolidation."""
        if session.base == 0:
            return
        whole = await asyncio.to_thread(SessionFile.read, session.path, session.key, repair=False)
        session.consolidated = max(session.consolidated, whole.consolidated)
        if session.consolidated < session.base:
            older = whole.messages[session.consolidated : session.base]
            session.messages[:0] = older
            session.base = session.consolidated
            self._grow(session, whole.size * len(older) // max(1, len(whole.messages)))

    def reset(self, key: str) -> Session:
        """Archive the session's file and start a fresh one; return the archived session."""
        old = self.get(key)
        if old.path.exists():
            archived = old.path.with_name(f"{old.path.stem}.{time.strftime('%Y%m%dT%H%M%S')}.archived.jsonl")
            os.replace(old.path, archived)
            old.path = archived
        self._bytes -= old.size
        self._sessions[key] = Session(key=key, path=self._directory / f"{quote(key, safe='')}.jsonl")
        return old

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

    @staticmethod
    def _write(path: Path, records: list[dict[str, Any]]) -> int:
        """One O_APPEND write, so a crash can tear at most the last line; returns the bytes written."""
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        return len(data)

    def _load(self, key: str, path: Path) -> Session:
        tail = read_tail(path, key, self._tail)
        return Session(
            key=key,
            path=path,
            messages=tail.messages,
            prompt_tokens=tail.prompt_tokens,
            completion_tokens=tail.completion_tokens,
            consolidated=tail.consolidated,
            base=tail.base,
            size=tail.size,
            inbound_ids=tail.inbound_ids,
        )
