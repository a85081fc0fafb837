"""What turns save is indexed in the background: a second after a quiet chat's turn, at most every few seconds in a
busy one (in virtual time)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.memory.index.scopes import MemoryIndexes
from bot.memory.index.store import MemoryIndex
from bot.memory.members import FileMembers
from bot.sessions.logs import FileLogs
from bot.sessions.store import SessionStore
from tests.memory.test_scope_index import Backend
from tests.support.virtual_time import in_virtual_time

KEY = "telegram:1"


class Joins:
    """Each background catch-up of the index: when it began (on the loop's clock), and events when one begins and
    when it is done."""

    def __init__(self, index: MemoryIndexes) -> None:
        self.began: list[float] = []
        self.started = asyncio.Event()
        self.done = asyncio.Event()
        catch_up = index.join

        async def join(directory: Path, key: str) -> None:
            self.began.append(asyncio.get_running_loop().time())
            self.started.set()
            task = asyncio.current_task()
            assert task is not None
            task.add_done_callback(lambda _: self.done.set())  # after the index's own: the scope is free again
            await catch_up(directory, key)

        index.join = join  # type: ignore[method-assign]

    async def next(self) -> None:
        await self.done.wait()
        self.done.clear()

    async def begun(self) -> None:
        """Return once a catch-up has begun (since the last call)."""
        await self.started.wait()
        self.started.clear()


def _index(tmp_path: Path) -> tuple[Backend, MemoryIndexes, Path]:
    backend = Backend(SessionStore(tmp_path / "sessions"), FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "l"))
    index = MemoryIndexes(backend.logs, backend.members, tmp_path / "ws", tmp_path / "state", "UTC", save_interval=5.0)
    return backend, index, tmp_path / "ws" / "memory"


def test_a_busy_scope_is_caught_up_at_most_every_interval(tmp_path: Path) -> None:
    backend, index, scope = _index(tmp_path)

    async def main() -> tuple[list[float], int]:
        joins = Joins(index)
        backend.say(KEY, "The boat is moored at pier nine", "OK")
        index.saved(scope, KEY)  # a session new to the scope: listed and indexed at once
        await joins.next()
        for said in ("The sail is torn", "The mast is new", "The oars are blue"):  # turns in a row
            backend.say(KEY, said, "Noted")
            index.saved(scope, KEY)
        await joins.next()
        await index.stop()
        return joins.began, MemoryIndex.open(index.path_for(scope)).cursors(KEY).popitem()[1][0].count

    began, indexed = in_virtual_time(main())

    assert began == [0.0, 5.0]  # at once; then 5 s after the first, for the three turns together
    assert indexed == 16  # every message the four turns saved


def test_a_quiet_scope_is_caught_up_a_second_after_its_turn(tmp_path: Path) -> None:
    backend, index, scope = _index(tmp_path)

    async def main() -> tuple[float, list[float]]:
        backend.say(KEY, "The boat is moored at pier nine", "OK")
        await index.join(scope, KEY)  # listed and indexed, with no background catch-up since
        joins = Joins(index)
        backend.say(KEY, "The anchor is heavy", "Noted")
        saved = asyncio.get_running_loop().time()
        index.saved(scope, KEY)
        await joins.next()
        await index.stop()
        return saved, joins.began

    saved, began = in_virtual_time(main())

    assert began == [saved + 1.0]


def test_a_folded_session_is_indexed_at_once_in_place_of_a_waiting_catch_up_and_again_after_a_running_one(
    tmp_path: Path,
) -> None:
    backend, index, scope = _index(tmp_path)

    async def main() -> tuple[list[float], int]:
        backend.say(KEY, "The boat is moored at pier nine", "OK")
        await index.join(scope, KEY)  # listed and indexed, with no background catch-up since
        joins = Joins(index)
        backend.say(KEY, "The anchor is heavy", "Noted")
        index.saved(scope, KEY)  # would wait a second
        index.folded(scope, KEY)  # consolidation moved the prompt's start past it: now
        await joins.begun()  # the catch-up is under way, and may have read the log already
        backend.say(KEY, "The chain is rusty", "Oh")
        index.folded(scope, KEY)
        index.folded(scope, KEY)  # one catch-up more covers both folds, after the running one, not beside it
        await index.idle()  # the running catch-up, then the one more it leaves behind it
        await index.stop()
        return joins.began, MemoryIndex.open(index.path_for(scope)).cursors(KEY).popitem()[1][0].count

    began, indexed = in_virtual_time(main())

    assert (len(began), began[0]) == (2, 0.0)
    assert indexed == 12  # the three turns' messages


def test_a_fold_during_a_catch_up_that_fails_leaves_no_rerun_for_a_later_one(tmp_path: Path) -> None:
    backend, index, scope = _index(tmp_path)
    catch_up = index.join
    failures = [OSError("disk full")]

    async def failing_once(directory: Path, key: str) -> None:
        if failures:
            raise failures.pop()
        await catch_up(directory, key)

    index.join = failing_once  # type: ignore[method-assign]

    async def main() -> tuple[list[float], int]:
        joins = Joins(index)
        backend.say(KEY, "The boat is moored at pier nine", "OK")
        index.folded(scope, KEY)  # a catch-up, which will fail
        index.folded(scope, KEY)  # while it runs: one more after it, had it not failed
        await index.idle()
        backend.say(KEY, "The anchor is heavy", "Noted")
        index.folded(scope, KEY)  # a catch-up of its own, and nothing after it
        await index.idle()
        await index.stop()
        return joins.began, MemoryIndex.open(index.path_for(scope)).cursors(KEY).popitem()[1][0].count

    began, indexed = in_virtual_time(main())

    assert len(began) == 2
    assert indexed == 8  # both turns' messages
