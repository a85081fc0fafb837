"""Sessions: one append-only JSONL file per chat, loaded once and appended in O(1)."""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

logger = logging.getLogger(__name__)


@dataclass
class Session:
    """A conversation's messages and running totals, mirrored in its JSONL file."""

    key: str
    path: Path
    messages: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    consolidated: int = 0
    inbound_ids: set[str] = field(default_factory=set)

    def history(self, limit: int) -> list[dict[str, Any]]:
        """The last unconsolidated messages, at most `limit`, never splitting a tool call from its results."""
        start = max(self.consolidated, len(self.messages) - limit)
        return pair_safe(self.messages[start:])


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
    """Loads sessions lazily, keeps them in memory, and appends each record as one line."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._sessions: dict[str, Session] = {}
        directory.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> Session:
        """The session for a key, loaded from disk the first time."""
        session = self._sessions.get(key)
        if session is None:
            session = self._load(key, self._directory / f"{quote(key, safe='')}.jsonl")
            self._sessions[key] = session
        return session

    def append(self, session: Session, messages: list[dict[str, Any]], inbound_ids: list[str] | None = None) -> None:
        """Append messages to the session and its file in one write; `inbound_ids` names the bus messages they hold."""
        now = time.time()
        lines: list[dict[str, Any]] = [{"type": "message", "ts": now, "message": message} for message in messages]
        if inbound_ids:
            lines[0]["inbound"] = inbound_ids
            session.inbound_ids.update(inbound_ids)
        self._write(session.path, lines)
        session.messages.extend(messages)

    def has_inbound(self, session: Session, inbound_ids: list[str]) -> bool:
        """Whether these bus messages are already in the session (a turn run again after a crash)."""
        return bool(inbound_ids) and session.inbound_ids.issuperset(inbound_ids)

    def record_usage(self, session: Session, prompt_tokens: int, completion_tokens: int) -> None:
        """Add one LLM call's token counts to the session's totals."""
        self._write(session.path, [{"type": "usage", "prompt": prompt_tokens, "completion": completion_tokens}])
        session.prompt_tokens += prompt_tokens
        session.completion_tokens += completion_tokens

    def mark_consolidated(self, session: Session, upto: int) -> None:
        """Record that messages before `upto` now live in long-term memory."""
        self._write(session.path, [{"type": "consolidated", "upto": upto}])
        session.consolidated = upto

    def reset(self, key: str) -> Session:
        """Archive the session's file and start a fresh one; return the archived session."""
        old = self.get(key)
        if old.path.exists():
            archived = old.path.with_name(f"{old.path.stem}.{time.strftime('%Y%m%dT%H%M%S')}.archived.jsonl")
            os.replace(old.path, archived)
            old.path = archived
        self._sessions[key] = Session(key=key, path=self._directory / f"{quote(key, safe='')}.jsonl")
        return old

    def _write(self, path: Path, records: list[dict[str, Any]]) -> None:
        data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
        self._write_raw(path, data.encode("utf-8"))

    @staticmethod
    def _write_raw(path: Path, data: bytes) -> None:
        """One O_APPEND write, so a crash can tear at most the last line."""
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)

    def _load(self, key: str, path: Path) -> Session:
        session = Session(key=key, path=path)
        if not path.exists():
            return session
        raw = path.read_bytes()
        good_end = 0
        for line_end, line in _lines(raw):
            try:
                record = json.loads(line)
            except ValueError:
                if line_end == len(raw) and not raw.endswith(b"\n"):
                    logger.warning("[%s] skipped a torn last line in %s", key, path.name)
                    break
                logger.warning("[%s] skipped an unreadable line in %s", key, path.name)
                good_end = line_end
                continue
            good_end = line_end
            _apply(session, record)
        if good_end < len(raw):
            with open(path, "r+b") as handle:
                handle.truncate(good_end)
        elif raw and not raw.endswith(b"\n"):
            self._write_raw(path, b"\n")
        return session


def _lines(raw: bytes) -> list[tuple[int, bytes]]:
    """Each non-empty line with the offset just past it (and its newline)."""
    out = []
    start = 0
    while start < len(raw):
        newline = raw.find(b"\n", start)
        end = len(raw) if newline < 0 else newline + 1
        if raw[start:end].strip():
            out.append((end, raw[start:end]))
        start = end
    return out


def _apply(session: Session, record: dict[str, Any]) -> None:
    kind = record.get("type")
    if kind == "message":
        session.messages.append(record["message"])
        session.inbound_ids.update(record.get("inbound", ()))
    elif kind == "usage":
        session.prompt_tokens += int(record.get("prompt", 0))
        session.completion_tokens += int(record.get("completion", 0))
    elif kind == "consolidated":
        session.consolidated = int(record.get("upto", 0))
