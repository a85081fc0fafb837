"""Reading a session file: its tail from the end (the turn's need), or whole (a backlog, or a file of old format).

Each message record carries its absolute index `n` and each usage record the running `totals`, so
the last lines of a file say everything a turn needs. A torn last line is cut off, never fatal.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.sessions.session import Session
from bot.storage.compact_json import dumps
from bot.storage.private_file import PRIVATE_FILE_MODE, sync_folder

logger = logging.getLogger(__name__)

BLOCK = 64 * 1024
YIELD_EVERY = 20  # records rewritten between GIL hand-overs (a fraction of a millisecond of work)


class _OldFormat(Exception):
    """A record without the fields a tail read relies on: read the file whole."""


def read_whole(path: Path, key: str, repair: bool = True) -> Session:
    """Every record of the file, in order, as the session `key`; `repair` cuts a torn last line off first."""
    found = Session(key=key, path=path)
    if not path.exists():
        return found
    if repair:
        repair_torn_end(path, key)
    with open(path, "rb") as handle:
        for line in handle:
            record = _parse(line, key, path)
            if record is None:
                continue
            kind = record.get("type")
            if kind == "message":
                found.messages.append(record["message"])
                found.inbound_ids.update(record.get("inbound", ()))
                found.size += len(line)
            elif kind == "usage":
                found.prompt_tokens += int(record.get("prompt", 0))
                found.completion_tokens += int(record.get("completion", 0))
            elif kind == "consolidated":
                found.consolidated = int(record.get("upto", 0))
            elif kind == "resumed":
                found.resumed = int(record.get("at", 0))
    return found


def read_tail(path: Path, key: str, tail: int) -> Session:
    """The last `tail` messages, the totals and the consolidation mark, reading backwards from the end.

    `consolidated` is 0 when its mark lies before the tail; `load_unconsolidated` finds it when needed.
    A file of the old format is read whole.
    """
    try:
        return _read_tail(path, key, tail)
    except _OldFormat:
        return read_whole(path, key)


def read_tail_rewriting(path: Path, key: str, tail: int) -> tuple[Session, Rewrite | None]:
    """`read_tail` for a worker thread: a file of the old format is rewritten beside itself, then its tail read.

    One streaming pass and no whole session in memory (nor for the garbage collector to walk, with the GIL held).
    """
    try:
        return _read_tail(path, key, tail), None
    except _OldFormat:
        rewrite = rewrite_old_format(path, key)
        found = _read_tail(rewrite.rewritten, key, tail)
        found.path = path
        return found, rewrite


def _read_tail(path: Path, key: str, tail: int) -> Session:
    found = Session(key=key, path=path)
    if not path.exists():
        return found
    repair_torn_end(path, key)
    total: int | None = None
    totals: list[int] | None = None
    consolidated: int | None = None
    backwards: list[dict[str, Any]] = []
    for line in lines_backwards(path):
        record = _parse(line, key, path)
        if record is None:
            continue
        kind = record.get("type")
        if kind == "message":
            index = record.get("n")
            if not isinstance(index, int):
                raise _OldFormat
            if total is None:
                total = index + 1
            backwards.append(record["message"])
            found.inbound_ids.update(record.get("inbound", ()))
            found.size += len(line)
            if index <= total - tail:
                break
        elif kind == "usage" and totals is None:
            if not isinstance(record.get("totals"), list):
                raise _OldFormat
            totals = record["totals"]
        elif kind == "consolidated" and consolidated is None:
            consolidated = int(record.get("upto", 0))
        elif kind == "resumed" and found.resumed is None:
            found.resumed = int(record.get("at", 0))
    backwards.reverse()
    found.messages = backwards
    found.base = (total or 0) - len(backwards)
    found.consolidated = consolidated or 0
    if totals:
        found.prompt_tokens, found.completion_tokens = int(totals[0]), int(totals[1])
    return found


@dataclass(frozen=True)
class Backlog:
    """The messages from the file's consolidation mark up to `base`, the mark, and their bytes in the file."""

    messages: list[dict[str, Any]]
    consolidated: int
    size: int


def read_backlog(path: Path, key: str, base: int) -> Backlog:
    """The unconsolidated messages before `base`, reading backwards from the end to the consolidation mark.

    It costs what lies after the mark, not the whole file; a file of the old format is read whole.
    """
    if not path.exists():
        return Backlog([], 0, 0)
    mark: int | None = None
    backwards: list[dict[str, Any]] = []
    size = 0
    for line in lines_backwards(path):
        record = _parse(line, key, path)
        if record is None:
            continue
        kind = record.get("type")
        if kind == "consolidated" and mark is None:
            mark = int(record.get("upto", 0))
        elif kind == "message":
            index = record.get("n")
            if not isinstance(index, int):
                whole = read_whole(path, key, repair=False)
                older = whole.messages[whole.consolidated : base]
                return Backlog(older, whole.consolidated, whole.size * len(older) // max(1, len(whole.messages)))
            if mark is not None and index < mark:
                break
            if index < base:
                backwards.append(record["message"])
                size += len(line)
    backwards.reverse()
    return Backlog(backwards, mark or 0, size)


def message_count(path: Path, key: str) -> int:
    """How many messages the file holds: the last message's number, read from the end (old format: counted)."""
    if not path.exists():
        return 0
    for line in lines_backwards(path):
        record = _parse(line, key, path)
        if record is not None and record.get("type") == "message":
            index = record.get("n")
            return index + 1 if isinstance(index, int) else len(read_whole(path, key, repair=False).messages)
    return 0


def last_messages(path: Path, key: str, limit: int) -> list[dict[str, Any]]:
    """The file's last `limit` messages, read backwards from its end, whatever its format."""
    if not path.exists() or limit <= 0:
        return []
    found: list[dict[str, Any]] = []
    for line in lines_backwards(path):
        record = _parse(line, key, path)
        if record is not None and record.get("type") == "message":
            found.append(record["message"])
            if len(found) == limit:
                break
    found.reverse()
    return found


@dataclass(frozen=True)
class Rewrite:
    """A session file rewritten in the current format beside the original, not yet swapped in."""

    path: Path
    rewritten: Path
    size: int

    def commit(self) -> bool:
        """Swap the rewrite in, unless the original grew since it was read (then keep the original as it is)."""
        if self.path.stat().st_size != self.size:
            self.discard()
            return False
        os.replace(self.rewritten, self.path)
        sync_folder(self.path.parent)
        return True

    def discard(self) -> None:
        """Keep the original; delete the rewrite."""
        self.rewritten.unlink(missing_ok=True)


def rewrite_old_format(path: Path, key: str) -> Rewrite:
    """Every record of an old-format file, messages numbered and usage with running totals, in a file beside it.

    Once it is swapped in, the file is read from its end like any other.
    """
    size = path.stat().st_size
    rewritten = path.with_name(path.name + ".rewrite")
    index = prompt = completion = 0
    with open(path, "rb") as source, open(rewritten, "wb") as target:
        for line in source:
            record = _parse(line, key, path)
            if record is None:
                continue
            if record.get("type") == "message":
                record["n"] = index
                index += 1
            elif record.get("type") == "usage":
                prompt += int(record.get("prompt", 0))
                completion += int(record.get("completion", 0))
                record["totals"] = [prompt, completion]
            target.write(dumps(record).encode() + b"\n")
            if index % YIELD_EVERY == 0:
                time.sleep(0)  # hand the GIL to the event loop's thread now and then, not only every switch interval
        target.flush()
        os.fsync(target.fileno())  # whole on disk before it is swapped in
    os.chmod(rewritten, PRIVATE_FILE_MODE)
    return Rewrite(path, rewritten, size)


def lines_backwards(path: Path, block_size: int = BLOCK) -> Iterator[bytes]:
    """The file's non-empty lines, last first, read in blocks of `block_size` bytes from the end."""
    with open(path, "rb") as handle:
        position = handle.seek(0, os.SEEK_END)
        carry = b""
        while position > 0:
            step = min(block_size, position)
            position -= step
            handle.seek(position)
            block = handle.read(step) + carry
            lines = block.split(b"\n")
            carry = lines[0]
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
        if carry.strip():
            yield carry


def repair_torn_end(path: Path, key: str) -> None:
    """Cut a torn last line off (a crash mid-write), or end a complete one with its missing newline."""
    with open(path, "r+b") as handle:
        end = position = handle.seek(0, os.SEEK_END)
        handle.seek(end - 1 if end else 0)
        if end == 0 or handle.read(1) == b"\n":
            return
        last = b""
        while position > 0 and b"\n" not in last:
            step = min(BLOCK, position)
            position -= step
            handle.seek(position)
            last = handle.read(step) + last
        last = last[last.rfind(b"\n") + 1 :]
        try:
            json.loads(last)
        except ValueError:
            logger.warning("[%s] skipped a torn last line in %s", key, path.name)
            handle.truncate(end - len(last))
            return
        handle.seek(end)
        handle.write(b"\n")


def _parse(line: bytes, key: str, path: Path) -> dict[str, Any] | None:
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except ValueError:
        logger.warning("[%s] skipped an unreadable line in %s", key, path.name)
        return None
    return record if isinstance(record, dict) else None
