"""Bringing a scope's index up to date with its sources: every session log it lists, HISTORY.md and MEMORY.md.

Each source is read from where the index last stopped, so a catch-up costs what was saved since.
Runs in a worker thread, under the scope's lock.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Protocol
from zoneinfo import ZoneInfo

from bot.memory.index.passages import exchange_parts, history_entries, memory_facts
from bot.memory.index.protocols import ScopeIndex
from bot.sessions.logs import Cursor, SessionLogs

logger = logging.getLogger(__name__)

ARCHIVES_READ = "~archives-read"  # a row noting a session's archived logs were read


class Bulk(Protocol):
    """Indexes a big backlog of one log elsewhere (another process), waiting for it; `threshold` bytes make one big."""

    threshold: int

    def __call__(self, index: Path, key: str, log: str, live: bool) -> None: ...


Shown = tuple[str, int] | None  # (session, n): the prompt shows that session's live log from message n on
BATCH = 1000  # log entries per transaction: a huge log is indexed in slices, a search waits at most one


def catch_up_sessions(
    index: ScopeIndex, logs: SessionLogs, keys: list[str], shown: Shown = None, bulk: Bulk | None = None
) -> int:
    """Index what the sessions' logs gained since the last catch-up; how many messages were read. With `shown`
    (session, n), that session's live log is left for later when all it gained is from message n on (what the
    prompt shows, which a search leaves out anyway)."""
    heads = logs.live_heads(keys)

    def _read(cursor: Cursor, live: bool) -> int:
        return read_log(index, logs, key, cursor, live, bulk)

    if (stamp := logs.pruned()) != (was := index.mark("pruned")):
        _drop_pruned(index, logs, keys, heads)
        index.add_entries((), "pruned", was, stamp)
    read = 0
    for key in keys:
        known = index.cursors(key)
        if not known:  # a session new to this index: its archived logs first
            for log in logs.archived(key):
                read += _read(Cursor(log), live=False)
            marker = Cursor(ARCHIVES_READ)  # so they are not looked for again
            index.add_exchanges(key, [], marker, marker, live=False)
            known = index.cursors(key)
        head = heads.get(key)
        old_live = next((cursor for cursor, live in known.values() if live), None)
        if old_live is not None and (head is None or head.log != old_live.log):
            read += _read(old_live, live=False)  # its rest, now archived
            index.mark_archived(key, old_live.log)
            for log in logs.archived(key):  # others archived meanwhile, with nothing read of them
                if log not in known and log != old_live.log:
                    read += _read(Cursor(log), live=False)
            current = head.log if head is not None else None
            for log, (cursor, live) in known.items():  # an archive /resume took back is gone from the archives
                if not live and log not in (ARCHIVES_READ, old_live.log, current):
                    read += _read(cursor, live=False)
        if head is None:
            continue
        cursor = known[head.log][0] if head.log in known else Cursor(head.log)
        if head.log not in known or _unread(key, cursor, head, shown):
            read += _read(cursor, live=True)
    return read


def _drop_pruned(index: ScopeIndex, logs: SessionLogs, keys: list[str], heads: dict[str, Cursor]) -> None:
    """Forget the logs retention deleted: those neither live nor among the sessions' archives any more."""
    for key in keys:
        kept = set(logs.archived(key))
        head = heads.get(key)
        for log in index.cursors(key):
            if log != ARCHIVES_READ and log not in kept and (head is None or log != head.log):
                index.drop_log(key, log)


def caught_up(
    index: ScopeIndex, logs: SessionLogs, keys: list[str], history: Path, memory: Path, shown: Shown = None
) -> bool:
    """Whether a catch-up would read nothing now (so a search can go without one): a few stats and lookups."""
    heads = logs.live_heads(keys)
    for key in keys:
        known = index.cursors(key)
        head = heads.get(key)
        live = next((cursor for cursor, is_live in known.values() if is_live), None)
        if not known or (live is not None and (head is None or head.log != live.log)):
            return False
        if head is not None and (head.log not in known or _unread(key, known[head.log][0], head, shown)):
            return False
    sources = (index.mark("pruned"), index.mark("history"), index.mark("memory"))
    return sources == (logs.pruned(), _history_mark(history), _memory_mark(memory))


def shown_indexed(index: ScopeIndex, logs: SessionLogs, key: str, shown_from: int) -> bool:
    """Whether the index holds session `key`'s live log up to message `shown_from` (where the prompt starts): one
    stat (the log is still the live one) and the read marks kept in memory."""
    live = next((cursor for cursor, is_live in index.cursors(key).values() if is_live), None)
    if live is None or live.count < shown_from:
        return False
    head = logs.live_heads([key]).get(key)
    return head is not None and head.log == live.log


def _unread(key: str, cursor: Cursor, head: Cursor, shown: Shown) -> bool:
    """Whether the live log has messages the index lacks, beyond those the prompt shows."""
    return head.offset > cursor.offset and not (shown is not None and shown[0] == key and cursor.count >= shown[1])


def read_log(
    index: ScopeIndex, logs: SessionLogs, key: str, cursor: Cursor, live: bool, bulk: Bulk | None = None
) -> int:
    """Index one log from `cursor` on, in slices (a big backlog in `bulk`'s child process first); messages read."""
    if bulk is not None and logs.backlog(key, cursor) >= bulk.threshold:
        bulk(index.path, key, cursor.log, live)
        index.refresh()  # the child wrote from another connection
        cursor = index.cursors(key).get(cursor.log, (cursor, live))[0]
    read = 0
    while True:
        batch = logs.read(key, cursor, BATCH)
        if batch.gone:
            index.drop_log(key, cursor.log)  # the index holds what the logs hold, no more
            return read
        if (batch.cursor != cursor or live) and not index.add_exchanges(
            key, exchange_parts(batch.entries), cursor, batch.cursor, live
        ):
            return read  # another process is indexing this log: the next catch-up starts where it got
        read += len(batch.entries)
        if batch.done or batch.cursor == cursor:
            return read
        cursor = batch.cursor
        time.sleep(0)  # between slices, let the event loop's thread have the GIL


def catch_up_history(index: ScopeIndex, path: Path, zone: ZoneInfo) -> None:
    """Index HISTORY.md's new entries; all of them again when the file was replaced or cut."""
    was, mark = index.mark("history"), _history_mark(path)
    if was == mark:
        return
    if not mark:  # the file is gone
        index.add_entries((), "history", was, "", replace="entry")
        return
    inode, _, size = mark.partition(":")
    old_inode, _, offset = was.partition(":")
    start = int(offset) if old_inode == inode and offset and int(offset) <= int(size) else 0
    with path.open("rb") as handle:
        handle.seek(start)
        data = handle.read()
    text = data.decode("utf-8", errors="replace")
    mark = f"{inode}:{start + len(data)}"
    index.add_entries(history_entries(text, zone), "history", was, mark, replace="entry" if start == 0 else None)


def catch_up_memory(index: ScopeIndex, path: Path) -> None:
    """Index MEMORY.md's facts again when the file changed (it is rewritten whole)."""
    was, mark = index.mark("memory"), _memory_mark(path)
    if was == mark:
        return
    if not mark:  # the file is gone
        index.add_entries((), "memory", was, "", replace="fact")
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    index.add_entries(memory_facts(text, int(mark.split(":")[0]) / 1e9), "memory", was, mark, replace="fact")


def _history_mark(path: Path) -> str:
    """The mark HISTORY.md has once indexed as it is now (inode and size; "" when there is none)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return ""
    return f"{found.st_ino}:{found.st_size}"


def _memory_mark(path: Path) -> str:
    """The mark MEMORY.md has once indexed as it is now ("" when there is none)."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        return ""
    return f"{found.st_mtime_ns}:{found.st_size}:{found.st_ino}"
