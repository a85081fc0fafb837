"""Reading session logs from a position on, for the memory index: the local store's files.

A log is one generation of a session (the live one, or one /new archived); it keeps its identity
when archived (the file is renamed, so its inode stays), and a cursor says how far it was read.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from bot.sessions.archive import ARCHIVED_SUFFIX, PRUNED_STAMP
from bot.storage.recent import RecentMap

READ_CHUNK = 2 * 1024 * 1024
NAMES_KEPT = 256  # sessions whose live file name is kept (quoting a key costs more than the stat it is for)
_DECODER = json.JSONDecoder()  # what json.loads uses
# A record's type as the store writes it first (a bare word: no escape can hide another value in it).
_TYPE = re.compile(rb'\{"type":"([a-z]+)"')
# A message whose text is never read, as the store writes one: a tool's result, or a tool call without text.
_UNREAD = re.compile(
    rb'\{"type":"message","ts":(?P<ts>-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?),"n":(?P<n>0|[1-9][0-9]*),'
    rb'"message":\{"role":"(?:(?P<tool>tool)"|assistant","content":null,)'
)


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One stored message of a log: its number in the log, when it was saved, the message (a tool's result, or a
    tool call without text, may come as its role alone: what the index never reads)."""

    n: int
    ts: float
    message: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Cursor:
    """How far a log was read: `offset` in the store's unit (bytes of a file, records of a list), `count` messages."""

    log: str
    offset: int = 0
    count: int = 0


@dataclass(frozen=True, slots=True)
class LogRead:
    """Entries read from one log and the cursor after them; `done` when the log holds nothing further now, `gone`
    when the log no longer exists (deleted by retention, or replaced)."""

    entries: list[LogEntry]
    cursor: Cursor
    done: bool = True
    gone: bool = False


class SessionLogs(Protocol):
    """The stored logs of sessions, read incrementally; safe to call from a worker thread."""

    def live_heads(self, keys: list[str]) -> dict[str, Cursor]:
        """Each session's live log and its current end (sessions without one are left out)."""

    def archived(self, key: str) -> list[str]:
        """The identities of the session's archived logs, oldest first."""

    def read(self, key: str, since: Cursor, limit: int) -> LogRead:
        """Up to about `limit` entries of the log `since.log` after `since`; none, and `gone`, when it is gone."""

    def pruned(self) -> str:
        """A stamp that changes whenever retention deletes archived logs ("" before it ever has)."""

    def backlog(self, key: str, since: Cursor) -> int:
        """About how many bytes of the log lie after `since` (0 where the store cannot tell)."""


class FileLogs:
    """The local store's files: the live `KEY.jsonl` and its `KEY.<time>.archived.jsonl`; identity is the inode."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._folder = str(directory)  # joined as a string: a stat per session and search, kept cheap
        self._stamp = os.path.join(self._folder, PRUNED_STAMP)
        self._names: RecentMap[str, str] = RecentMap(NAMES_KEPT)

    def live_heads(self, keys: list[str]) -> dict[str, Cursor]:
        heads = {}
        for key in keys:
            try:
                found = os.stat(self._live_name(key))
            except FileNotFoundError:
                continue
            heads[key] = Cursor(str(found.st_ino), found.st_size)
        return heads

    def archived(self, key: str) -> list[str]:
        return [str(path.stat().st_ino) for path in self._archived_paths(key)]

    def read(self, key: str, since: Cursor, limit: int) -> LogRead:
        path = self._find(key, since.log)
        if path is None:
            return LogRead([], since, gone=True)
        try:
            with path.open("rb") as handle:
                # what is there, not the whole chunk: a read of 2 MB allocates them all (60 µs) for a few lines
                size = min(READ_CHUNK, os.fstat(handle.fileno()).st_size - since.offset)
                handle.seek(since.offset)
                data = handle.read(size) if size > 0 else b""
                if len(data) == READ_CHUNK and not data.endswith(b"\n"):
                    data += handle.readline()  # the rest of a line that straddles the chunk's end
        except FileNotFoundError:
            return LogRead([], since)  # archived by /new just now: found under its new name next time
        entries: list[LogEntry] = []
        count = since.count
        used = 0
        while len(entries) < limit:  # by position: the lines left unparsed (most of the bytes) are never copied
            end = data.find(b"\n", used) + 1
            if not end:
                break  # an append under way (or a torn last line)
            entry = _entry(data, used, end, count)
            used = end
            if entry is not None:
                entries.append(entry)
                count += 1
        cursor = Cursor(since.log, since.offset + used, count)
        return LogRead(entries, cursor, done=len(entries) < limit and len(data) < READ_CHUNK)

    def backlog(self, key: str, since: Cursor) -> int:
        path = self._find(key, since.log)
        try:
            return max(0, os.stat(path).st_size - since.offset) if path is not None else 0
        except FileNotFoundError:
            return 0

    def pruned(self) -> str:
        try:
            found = os.stat(self._stamp)
        except FileNotFoundError:
            return ""
        return f"{found.st_mtime_ns}:{found.st_size}:{found.st_ino}"

    def _live_name(self, key: str) -> str:
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = os.path.join(self._folder, quote(key, safe="") + ".jsonl")
        return name

    def _archived_paths(self, key: str) -> list[Path]:
        """The session's own archived files, oldest first (its threads' and other chats' left out)."""
        prefix = quote(key, safe="") + "."
        try:
            # Not glob (its pattern cache grows per chat), and no list of every session's name: a chat's first
            # search walks a folder of thousands, and a list of them all would raise the heap's peak per chat. The
            # prefix is checked inline: of those thousands, only the session's own names pay for a call.
            with os.scandir(self._directory) as entries:
                names = [name for entry in entries if (name := entry.name).startswith(prefix)]
        except FileNotFoundError:
            return []
        return [self._directory / name for name in sorted(names) if _archive_of(name, prefix)]

    def _find(self, key: str, log: str) -> Path | None:
        """The file of the log with this identity: the live one, or (looked for only then) one archived since."""
        live = self._live_name(key)
        try:
            if str(os.stat(live).st_ino) == log:
                return Path(live)
        except FileNotFoundError:
            pass
        for path in self._archived_paths(key):
            try:
                if str(path.stat().st_ino) == log:
                    return path
            except FileNotFoundError:
                continue
        return None


def _archive_of(name: str, prefix: str) -> bool:
    """Whether a file name is an archived log of the session whose quoted key and dot are `prefix`."""
    return (
        name.startswith(prefix)
        and name.endswith(ARCHIVED_SUFFIX)
        and "." not in name.removeprefix(prefix).removesuffix(ARCHIVED_SUFFIX)
    )


def _entry(data: bytes, start: int, end: int, count: int) -> LogEntry | None:
    """The message the line `data[start:end]` holds (`count` its number when the line has none); None for another
    record or a torn line. Records of another type, tool results and tool calls without text are told from the
    line's start, without parsing what a tool returned (most of a log's bytes), which no reader of logs uses: they
    come with their role alone."""
    kind = _TYPE.match(data, start, end)
    if kind is not None and kind[1] != b"message":
        return None  # usage, consolidated, resumed (one torn into the next write's line is skipped all the same)
    unread = _UNREAD.match(data, start, end)
    if unread is not None and data.find(b'{"type":"', start + 1, end) < 0:  # whole: no write ran on into a torn one
        return LogEntry(int(unread["n"]), float(unread["ts"]), {"role": "tool" if unread["tool"] else "assistant"})
    record = _record(data[start:end])
    if record is None or record.get("type", "message") != "message":
        return None
    message = record.get("message")
    if not isinstance(message, dict):
        return None
    return LogEntry(int(record.get("n", count)), float(record.get("ts") or 0.0), message)


def _record(line: bytes) -> dict[str, Any] | None:
    """The line's JSON object, as `json.loads` reads it; None for anything else (a torn line)."""
    try:
        text = line.decode()
        record, end = _DECODER.raw_decode(text)  # without loads' two whitespace scans and its encoding sniff
        if end != len(text) - 1:  # not just the object and its newline: loads says what it is
            record = json.loads(line)
    except ValueError:  # not UTF-8, or not an object first: loads again, for what it accepts beyond that
        try:
            record = json.loads(line)
        except ValueError:
            return None  # a torn line
    return record if isinstance(record, dict) else None
