"""The memory indexes of every scope, kept under the state folder: opened on demand, caught up before each
search (so a search sees everything saved before it) and in the background after each turn."""

from __future__ import annotations

import asyncio
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

from bot.memory.index.catchup import (
    Bulk,
    catch_up_history,
    catch_up_memory,
    catch_up_sessions,
    caught_up,
    shown_indexed,
)
from bot.memory.index.catchup import Shown as Seen
from bot.memory.index.protocols import IndexHome, ScopeIndex
from bot.memory.index.query import parse_query
from bot.memory.index.ranking import Hit, Ranker, Shown, best_hits, shown_ranges
from bot.memory.index.semantic import SemanticMemory
from bot.memory.index.store import FileIndexes, IndexUnusable, damaged
from bot.memory.index.windows import REACH, widen
from bot.memory.index.word_counts import WordCounts
from bot.memory.members import ScopeMembers
from bot.sessions.logs import SessionLogs
from bot.storage.chat_paths import chat_path, relative_name
from bot.storage.recent import RecentMap

logger = logging.getLogger(__name__)

INDEX_FILE = "index.sqlite3"
MAX_OPEN = 32
MAX_LISTED = 128  # sessions remembered as listed in their scope (a forgotten one is looked up again)
SAVE_DELAY = 1.0  # seconds from a turn's end to indexing what it saved, so a burst of turns shares one catch-up
SAVE_INTERVAL = 5.0  # seconds at least from one background catch-up of a scope to its next: a busy chat's turns share
# one (each costs about 1 ms beside its messages' own cost); a search catches up by itself, so nothing waits on it
WIDER = 4  # hits looked at for each window wanted: windows that merge leave room for further ones
QUICK_SEARCH = 0.002  # seconds of CPU: a scope searched faster is searched on the event loop (a thread hop costs more)
RECHECK = 1.0  # seconds a scope found caught up is taken as such for what others save (searches in a row: no stats)
T = TypeVar("T")


@dataclass
class _Open:
    """An open index with the lock that serialises its use, the scope's files it indexes and the sessions known to be
    listed for it."""

    index: ScopeIndex
    history: Path
    memory: Path
    lock: threading.Lock = field(default_factory=threading.Lock)
    members: set[str] = field(default_factory=set)
    closed: bool = False
    took: dict[bool, tuple[float, float]] = field(default_factory=dict)  # CPU seconds the last two searches took,
    # without and with the second pass (`follow`): the recall tool's searches cost about twice auto-recall's
    counts: WordCounts = field(default_factory=WordCounts)  # how many passages hold each word, kept a while
    checked: float = -math.inf  # when (monotonic) it was last found caught up, or last caught up

    def close(self) -> None:
        """Close the index once nobody uses it; a later use opens it again."""
        with self.lock:
            self.index.close()
            self.closed = True


class MemoryIndexes:
    """One index per memory scope folder, at `state_dir/memory_index/<folder relative to the workspace>/`."""

    def __init__(
        self,
        logs: SessionLogs,
        members: ScopeMembers,
        workspace: Path,
        state_dir: Path,
        timezone: str,
        clock: Callable[[], float] = time.time,
        max_open: int = MAX_OPEN,
        save_delay: float = SAVE_DELAY,
        quick: float = 0.0,
        bulk: Bulk | None = None,
        home: IndexHome | None = None,
        recheck: float = 0.0,
        ticks: Callable[[], float] = time.monotonic,
        save_interval: float = SAVE_INTERVAL,
    ) -> None:
        """`quick`: a scope where either of the last two searches of the same kind took less CPU (in seconds) is
        searched on the caller's thread when its index needs no catch-up (one slow search, as when the collector ran
        in it, does not send the next to a thread); 0 always searches in a worker thread (as where the logs are
        across a network).
        `bulk` indexes a big backlog in another process. `home` keeps the indexes (None: SQLite files under
        `state_dir`). `recheck`: for that many seconds (on `ticks`) after a scope was found caught up, a search that
        says what its prompt shows checks only its own session, in memory: what other sessions and HISTORY.md or
        MEMORY.md gained meanwhile is searchable from the next check, within `recheck`; 0 checks every search.
        `save_interval`: seconds at least between a scope's catch-ups after turns (`saved`)."""
        self._logs = logs
        self._members = members
        self._workspace = workspace
        self._root = state_dir / "memory_index"
        self._zone = ZoneInfo(timezone)
        self._clock = clock
        self._open: RecentMap[Path, _Open] = RecentMap(max_open, on_evict=lambda _, oldest: oldest.close())
        self._opening = threading.Lock()
        self._pending: dict[Path, asyncio.Task[None] | asyncio.TimerHandle] = {}
        self._again: set[Path] = set()  # scopes folded into while their catch-up ran: caught up once more after it
        self._delay = save_delay
        self._interval = save_interval
        self._catch_up_began: RecentMap[Path, float] = RecentMap(MAX_LISTED)  # scope -> loop time, last catch-up
        self._quick = quick
        self._bulk = bulk
        self._home: IndexHome = FileIndexes() if home is None else home
        self._recheck = recheck
        self._ticks = ticks
        self._names: RecentMap[Path, str] = RecentMap(MAX_LISTED)  # scope folder -> name (resolving costs stats)
        self._listed: RecentMap[tuple[Path, str], None] = RecentMap(MAX_LISTED)  # (scope, session) known listed
        self.rankers: list[Ranker] = []  # further ranked lists fused with the keyword one
        self.semantic: SemanticMemory | None = None  # vectors, when memory.embeddings names a model

    def scope_name(self, directory: Path) -> str:
        """A scope folder's name: its path relative to the workspace, the same on every machine."""
        name = self._names.get(directory)
        if name is None:
            name = self._names[directory] = relative_name(directory, self._workspace)
        return name

    def path_for(self, directory: Path) -> Path:
        """Where a scope folder's index lives."""
        parts = [part for part in self.scope_name(directory).split("/") if part != "."]
        return chat_path(self._root, *parts, INDEX_FILE)

    async def search(
        self,
        directory: Path,
        text: str,
        limit: int = 5,
        since: float | None = None,
        until: float | None = None,
        shown: Shown | None = None,
        join: str | None = None,
        window_chars: tuple[int, int] | None = None,
        follow: bool = False,
        reach: int = REACH,
    ) -> list[Hit]:
        """The best passages of the scope for a question, after listing session `join` for the scope and catching
        the index up; none for a question without content words. With `window_chars` (each, in all), each is a
        window of up to `reach` exchanges on each side within that many characters (`windows.widen`); `follow` adds
        the second pass (`second_pass`), which costs a second search."""
        query = parse_query(text, datetime.fromtimestamp(self._clock(), self._zone))
        if not query.words:
            return []
        now = self._clock()
        rankers = [*self.rankers, *await self._vector_rankers(text, directory)]
        seen = (shown.session, shown.start) if shown is not None else None

        def ranked(found: _Open) -> list[Hit]:
            started = time.thread_time()  # the search's own cost: the load of the machine is not the search's
            if window_chars is None:
                hits = best_hits(found.index, query, limit, now, since, until, shown, rankers, follow, found.counts)
            else:
                hits = best_hits(
                    found.index, query, limit * WIDER, now, since, until, shown, rankers, follow, found.counts
                )
                ranges = shown_ranges(found.index, shown) if shown is not None else []
                hits = widen(found.index, hits, limit, *window_chars, shown=ranges, reach=reach)
            spent = time.thread_time() - started
            found.took[follow] = (found.took.get(follow, (spent, spent))[1], spent)
            return hits

        def run(found: _Open) -> list[Hit]:
            if join is not None:
                self._join(directory, found, join)
            if not self._caught_up(directory, found, seen):  # a look costs less than a catch-up that reads nothing
                self._catch_up(directory, found, seen)
            return ranked(found)

        hits = self._search_here(directory, join, seen, follow, ranked)
        if hits is None:
            hits = await asyncio.to_thread(self._using, directory, run)
        if self.semantic is not None:
            self.semantic.index_changed(self.scope_name(directory), self.path_for(directory))  # embed what was added
        return hits

    def _search_here(
        self, directory: Path, join: str | None, seen: Seen, follow: bool, ranked: Callable[[_Open], list[Hit]]
    ) -> list[Hit] | None:
        """The search run on this thread when either of the scope's last two of its kind was quick, its index free
        and caught up; None when it is for a worker thread (which catches up first, and rebuilds a damaged index)."""
        found = self._open.get(directory)
        slow = found is None or min(found.took.get(follow, (math.inf, math.inf))) >= self._quick
        if found is None or slow or not found.lock.acquire(blocking=False):
            return None
        try:
            if found.closed or (join is not None and join not in found.members):
                return None
            found.index.refresh()
            if not self._caught_up(directory, found, seen):
                return None
            if join is not None:
                self._listed[directory, join] = None
            return ranked(found)
        except (sqlite3.DatabaseError, IndexUnusable):
            return None
        finally:
            found.lock.release()

    async def join(self, directory: Path, key: str) -> None:
        """List session `key` for the scope (once) and bring the index up to date."""

        def run(found: _Open) -> None:
            self._join(directory, found, key)
            self._catch_up(directory, found)

        await asyncio.to_thread(self._using, directory, run)
        if self.semantic is not None:
            self.semantic.index_changed(self.scope_name(directory), self.path_for(directory))

    def saved(self, directory: Path, key: str) -> None:
        """Messages were saved to session `key` of the scope: index them a little later, off the event loop:
        `save_delay` after the turn, and `save_interval` after the scope's last such catch-up began (turns in a row
        share one; a search catches up by itself first)."""
        if directory in self._pending:
            return
        if (directory, key) not in self._listed:  # a session new to the scope is listed at once: a search in another
            self._start(directory, key)  # chat must see it
            return
        last = self._catch_up_began.get(directory, -math.inf)
        loop = asyncio.get_running_loop()
        delay = max(self._delay, last + self._interval - loop.time())
        self._pending[directory] = loop.call_later(delay, self._start, directory, key)

    def folded(self, directory: Path, key: str) -> None:
        """Consolidation folded session `key`'s older messages out of its prompt: index them now, not in a search."""
        pending = self._pending.get(directory)
        if isinstance(pending, asyncio.Task):  # it may have read the sources already
            self._again.add(directory)
            return
        if pending is not None:
            pending.cancel()
        self._start(directory, key)

    def _start(self, directory: Path, key: str) -> None:
        self._catch_up_began[directory] = asyncio.get_running_loop().time()
        task = asyncio.create_task(self.join(directory, key), name=f"memory-index:{key}")
        self._pending[directory] = task

        def finished(done: asyncio.Task[None]) -> None:
            self._pending.pop(directory, None)
            again = directory in self._again
            self._again.discard(directory)  # a failed or cancelled catch-up leaves no rerun behind for a later one
            if done.cancelled():
                return
            if done.exception() is not None:
                logger.error("[%s] indexing memory failed", key, exc_info=done.exception())
            elif again:
                self._start(directory, key)

        task.add_done_callback(finished)

    async def idle(self) -> None:
        """Return once no background catch-up runs (one still waiting for its time is not waited for)."""
        while running := [pending for pending in self._pending.values() if isinstance(pending, asyncio.Task)]:
            await asyncio.wait(running)

    async def reindex(self, directory: Path) -> int:
        """Rebuild the scope's index from its sources, in place (a running gateway keeps using the same file);
        how many passages it holds."""

        def run(found: _Open) -> int:
            found.index.clear()
            self._catch_up(directory, found)
            return found.index.size()

        size = await asyncio.to_thread(self._using, directory, run, False)
        if self.semantic is not None:
            self.semantic.index_changed(self.scope_name(directory), self.path_for(directory))
        return size

    async def _vector_rankers(self, text: str, directory: Path) -> list[Ranker]:
        """The vector ranking of the question in the scope, when semantic search is on and the embedding server
        answers."""
        if self.semantic is None:
            return []
        ranker = await self.semantic.ranker(text, self.scope_name(directory), self.path_for(directory))
        return [ranker] if ranker is not None else []

    async def stop(self) -> None:
        """Finish the background catch-ups (those not started yet are left to the next search), stop the
        embedding, then close."""
        for pending in list(self._pending.values()):
            if isinstance(pending, asyncio.TimerHandle):
                pending.cancel()
        self._again.clear()
        await self.idle()
        self._pending.clear()
        if self.semantic is not None:
            await self.semantic.stop()
        with self._opening:
            for found in self._open.values():
                found.close()
            self._open.clear()

    def _using(self, directory: Path, work: Callable[[_Open], T], warn_missing: bool = True) -> T:
        """Run `work` on the scope's open index under its lock; an unusable index is rebuilt once, with a WARNING."""
        found = self._get(directory, warn_missing)
        try:
            with found.lock:
                if found.closed:  # evicted meanwhile: open it again
                    return self._using(directory, work)
                found.index.refresh()
                return work(found)
        except (sqlite3.DatabaseError, IndexUnusable) as exc:
            if not damaged(exc):
                raise
            logger.warning("memory index %s is unusable (%s): rebuilding it", self.path_for(directory), exc)
            self._drop(directory)
            found = self._get(directory)
            with found.lock:
                found.index.refresh()
                return work(found)

    def _get(self, directory: Path, warn_missing: bool = True) -> _Open:
        with self._opening:
            found = self._open.get(directory, fresh=True)
            if found is not None:
                return found
            path, scope = self.path_for(directory), self.scope_name(directory)
            if warn_missing and not self._home.exists(scope, path) and self._has_sources(directory):
                # A fresh home's first message, or an index deleted on purpose: rebuilt by itself, nothing to act on.
                logger.info("memory index %s is missing: rebuilding it from the session logs", path)
            try:
                index = self._home.open(scope, path)
            except IndexUnusable as exc:
                logger.warning("memory index %s cannot be used (%s): rebuilding it", path, exc)
                self._home.delete(scope, path)
                index = self._home.open(scope, path)
            # the least recently used index past `max_open` is closed
            found = self._open[directory] = _Open(index, directory / "HISTORY.md", directory / "MEMORY.md")
            return found

    def _drop(self, directory: Path) -> None:
        """Close and delete the scope's index file."""
        with self._opening:
            found = self._open.pop(directory, None)
        if found is not None:
            found.close()
        self._home.delete(self.scope_name(directory), self.path_for(directory))

    def _join(self, directory: Path, found: _Open, key: str) -> None:
        self._listed[directory, key] = None
        if key in found.members:
            return
        scope = self.scope_name(directory)
        listed = self._members.members(scope)
        if key not in listed:
            self._members.add(scope, key)
            listed.append(key)
        found.members.update(listed)

    def _has_sources(self, directory: Path) -> bool:
        """Whether the scope has anything to index (so a missing index is worth a WARNING)."""
        names = ("HISTORY.md", "MEMORY.md")
        return any((directory / name).exists() for name in names) or bool(
            self._members.members(self.scope_name(directory))
        )

    def _caught_up(self, directory: Path, found: _Open, shown: Seen) -> bool:
        """Whether a catch-up would read nothing now, or the scope was found so lately and the session's messages
        before the prompt's are indexed (`recheck`)."""
        now = self._ticks()
        if shown is not None and now - found.checked < self._recheck and shown_indexed(found.index, self._logs, *shown):
            return True
        keys = self._members.members(self.scope_name(directory))
        if not caught_up(found.index, self._logs, keys, found.history, found.memory, shown):
            return False
        found.checked = now
        return True

    def _catch_up(self, directory: Path, found: _Open, shown: tuple[str, int] | None = None) -> None:
        found.checked = self._ticks()  # what is saved from now on may be missed: the next check looks
        started = time.perf_counter()
        members = self._members.members(self.scope_name(directory))
        catch_up_history(found.index, found.history, self._zone)
        catch_up_memory(found.index, found.memory)
        read = catch_up_sessions(found.index, self._logs, members, shown, self._bulk)  # last: its write settles them
        if read > 1000:
            logger.info("indexed %d messages of %s in %.1fs", read, directory, time.perf_counter() - started)
