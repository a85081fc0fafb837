"""Sessions on the local store: one append-only JSONL file per chat; a bounded cache of their recent tails."""

from __future__ import annotations

import asyncio
import glob
import itertools
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from bot.sessions.archive import (
    ARCHIVED_SUFFIX,
    PRUNED_STAMP,
    ArchivedSession,
    records_of,
    summarise,
)
from bot.sessions.cache import DEFAULT_MAX_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_TAIL, SessionCache
from bot.sessions.session import Session
from bot.sessions.tail import (
    Rewrite,
    last_messages,
    message_count,
    read_backlog,
    read_tail,
    read_tail_rewriting,
)
from bot.storage.chat_paths import chat_path
from bot.storage.compact_json import dumps
from bot.storage.private_file import write_private

__all__ = ["Session", "SessionStore"]

logger = logging.getLogger(__name__)

_ARCHIVE_ID = re.compile(r"\d{8}T\d{6}(-\d+)?")
"""When /new archived a session file (local time), with a number when two came within one second."""


class SessionStore(SessionCache):
    """Loads a session's tail from the end of its file, keeps the recently used ones, appends each record as a line.

    An evicted session is read back from its file when needed.
    """

    def __init__(
        self,
        directory: Path,
        tail: int = DEFAULT_TAIL,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        max_bytes: int = DEFAULT_MAX_BYTES,
        read: Callable[[Path, str, int], tuple[Session, Rewrite | None]] = read_tail_rewriting,
    ) -> None:
        super().__init__(tail, max_sessions, max_bytes)
        self._directory = directory
        self._read = read  # how `load` reads a tail in its worker thread
        directory.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> Session:
        """The session for a key, its tail read from disk when it is not cached."""
        session = self._lookup(key)
        if session is None:
            session = self._load(key, self._path(key))
            self._remember(session)
        return session

    async def load(self, key: str) -> Session:
        """`get` for a turn: a session that is not cached is read in a worker thread; a file of the old format
        (without message numbers) is rewritten in the current format there, never read whole on the event loop."""
        session = self._lookup(key)
        if session is not None:
            return session
        path = self._path(key)
        found, rewrite = await asyncio.to_thread(self._read, path, key, self._tail)
        current = self._lookup(key)
        if current is not None:  # a synchronous `get` read it meanwhile, and may have appended to it since
            if rewrite is not None:
                rewrite.discard()
            return current
        # Appends happen on the event loop, so none can fall between commit's size check and its swap.
        if rewrite is not None:
            if not rewrite.commit():
                return await self.load(key)  # the file grew while it was rewritten: read it again
            logger.info("[%s] session file rewritten in the current format", key)
        self._remember(found)
        return found

    def recent(self, key: str, limit: int) -> list[dict[str, Any]]:
        """The session's last `limit` messages, from the cache or else read from its file without caching."""
        session = self._sessions.get(key)
        if session is None:
            return last_messages(self._path(key), key, limit)
        return session.messages[-limit:]

    def append(
        self,
        session: Session,
        messages: list[dict[str, Any]],
        inbound_ids: list[str] | None = None,
        usage: tuple[int, int] | None = None,
    ) -> None:
        """Append messages to the session and its file in one write; `inbound_ids` names the bus messages they hold.

        `usage` (prompt and completion tokens of the call that wrote them) is recorded first, in the same write.
        """
        now = time.time()
        first = session.total
        lines = [{"type": "message", "ts": now, "n": first + i, "message": m} for i, m in enumerate(messages)]
        if inbound_ids:
            lines[0]["inbound"] = inbound_ids
            session.inbound_ids.update(inbound_ids)
        data = _encoded(lines)
        self._write(self._file(session), _encoded([self._usage(session, *usage)]) + data if usage else data)
        session.messages.extend(messages)
        self._grow(session, len(data))
        self._trim(session)

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one LLM call's token counts to the session's totals."""
        self._write(self._file(session), _encoded([self._usage(session, prompt_tokens, completion_tokens)]))

    @staticmethod
    def _usage(session: Session, prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
        """The usage record of one call, its tokens added to the session's totals."""
        session.prompt_tokens += prompt_tokens
        session.completion_tokens += completion_tokens
        record = {"type": "usage", "prompt": prompt_tokens, "completion": completion_tokens}
        record["totals"] = [session.prompt_tokens, session.completion_tokens]
        return record

    def mark_consolidated(self, session: Session, upto: int) -> None:
        """Record that messages before `upto` now live in long-term memory."""
        self._write(self._file(session), _encoded([{"type": "consolidated", "upto": upto}]))
        session.consolidated = upto
        current = self._sessions.get(session.key)
        if current is not None and current is not session and current.path == session.path:
            current.consolidated = max(current.consolidated, upto)  # the session was evicted and read back meanwhile
        self._trim(session)

    def sync_consolidated(self, session: Session) -> None:
        """Nothing to take up: only this process writes these files, and `mark_consolidated` updates every copy."""

    async def load_unconsolidated(self, session: Session) -> None:
        """Read back (in a thread) the unconsolidated messages older than the tail, for consolidation: only those,
        from the end of the file back to its consolidation mark; nothing when the tail starts at or after it."""
        if session.base == 0 or session.consolidated >= session.base:
            return
        backlog = await asyncio.to_thread(read_backlog, self._file(session), session.key, session.base)
        session.consolidated = max(session.consolidated, backlog.consolidated)
        if session.consolidated < session.base:
            skip = session.consolidated - backlog.consolidated
            older = backlog.messages[skip:]
            session.messages[:0] = older
            session.base = session.consolidated
            self._grow(session, backlog.size * len(older) // max(1, len(backlog.messages)))

    def reset(self, key: str) -> Session:
        """Archive the session's file and start a fresh one; return the archived session."""
        old = self.get(key)
        path = self._file(old)
        if path.exists():
            stamp = time.strftime("%Y%m%dT%H%M%S")
            archived = path.with_name(f"{path.stem}.{stamp}{ARCHIVED_SUFFIX}")
            for again in itertools.count(2):  # never over an archive made within the same second
                if not archived.exists():
                    break
                archived = path.with_name(f"{path.stem}.{stamp}-{again}{ARCHIVED_SUFFIX}")
            os.replace(path, archived)
            for copy in self._copies(lambda session: self._file(session) == path):
                copy.path = archived  # a consolidation still running on an older copy marks the archive
        self._remember(Session(key=key, path=self._path(key)))
        return old

    def archives(self, key: str) -> list[ArchivedSession]:
        """The session's archived files (read whole: call it off the event loop), most recently active first."""
        prefix = quote(key, safe="") + "."
        found = []
        for path in self._directory.glob(glob.escape(prefix) + "*" + ARCHIVED_SUFFIX):
            archive_id = path.name.removeprefix(prefix).removesuffix(ARCHIVED_SUFFIX)
            if _ARCHIVE_ID.fullmatch(archive_id):
                found.append(summarise(archive_id, list(records_of(path)), path.stat().st_size, path.stat().st_mtime))
        return sorted(found, key=lambda archive: archive.last_active, reverse=True)

    def resume(self, key: str, archive_id: str) -> Session:
        """Move the archive's file back in place of the live one, which is archived first."""
        archived = self._directory / f"{quote(key, safe='')}.{archive_id}{ARCHIVED_SUFFIX}"
        if not _ARCHIVE_ID.fullmatch(archive_id) or not archived.exists():
            raise KeyError(archive_id)
        taken = archived.with_name(archived.name + ".resuming")  # out of the way of the archive reset makes
        returning = self._copies(lambda session: session.path == archived)  # before reset may reuse its name
        os.replace(archived, taken)
        old = self.reset(key)
        os.replace(taken, self._path(key))
        for copy in returning:  # the archive's consolidation, if still running, marks the live file now
            copy.path = self._path(key)
        fresh = self._lookup(key)  # the empty session reset cached: the next read finds the resumed file
        if fresh is not None:
            self._forget(fresh)
        resumed = self.get(key)
        resumed.resumed = resumed.total  # its messages are shown again, though consolidated when it was archived
        self._write(self._file(resumed), _encoded([{"type": "resumed", "at": resumed.total}]))
        return old

    def summaries(self, since: float) -> list[dict[str, Any]]:
        """Each live session file touched since `since`: key, last activity and message count (from its end)."""
        found = []
        for path in self._directory.glob("*.jsonl"):
            if path.name.endswith(ARCHIVED_SUFFIX) or path.stat().st_mtime < since:
                continue
            key = unquote(path.name.removesuffix(".jsonl"))
            found.append({"key": key, "last_activity": path.stat().st_mtime, "messages": message_count(path, key)})
        return found

    def _path(self, key: str) -> Path:
        return chat_path(self._directory, f"{quote(key, safe='')}.jsonl")

    def _file(self, session: Session) -> Path:
        return session.path or self._path(session.key)

    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        """One O_APPEND write, so a crash can tear at most the last line."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _load(self, key: str, path: Path) -> Session:
        return read_tail(path, key, self._tail)


def _encoded(records: list[dict[str, Any]]) -> bytes:
    """The records as JSON lines."""
    return "".join(dumps(r) + "\n" for r in records).encode()


def prune_archived(directory: Path, before: float) -> int:
    """Delete the session files archived (by /new) and untouched since before `before`, then stamp the folder so the
    memory indexes drop them; how many."""
    removed = 0
    for path in directory.glob("*.archived.jsonl") if directory.exists() else ():
        if path.stat().st_mtime < before:
            path.unlink(missing_ok=True)
            removed += 1
    if removed:
        write_private(directory / PRUNED_STAMP, f"{time.time()!r} {removed}\n")
    return removed
