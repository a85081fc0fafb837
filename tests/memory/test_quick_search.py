"""A scope whose searches are quick is searched on the event loop, yet never misses a message saved before."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

from bot.memory.index.query import Query
from bot.memory.index.ranking import Shown
from bot.memory.index.scopes import MemoryIndexes
from bot.memory.index.store import MemoryIndex
from bot.memory.members import FileMembers
from bot.sessions.logs import FileLogs
from bot.sessions.store import SessionStore
from tests.memory.test_scope_index import Backend, asked


class Where:
    """A ranked list that adds nothing and notes the thread each search ran on."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def __call__(
        self, index: MemoryIndex, query: Query, limit: int, since: float | None, until: float | None
    ) -> list[int]:
        self.threads.append(threading.get_ident())
        return []

    def on_loop(self) -> list[bool]:
        return [thread == threading.get_ident() for thread in self.threads]


def quick_index(tmp_path: Path) -> tuple[Backend, MemoryIndexes, Where]:
    backend = Backend(SessionStore(tmp_path / "sessions"), FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "l"))
    index = MemoryIndexes(
        backend.logs, backend.members, tmp_path / "ws", tmp_path / "state", "UTC", clock=lambda: 1.78e9, quick=math.inf
    )
    where = Where()
    index.rankers.append(where)
    return backend, index, where


async def test_a_caught_up_scope_is_searched_on_the_loop_and_a_save_elsewhere_sends_it_to_a_thread(
    tmp_path: Path,
) -> None:
    backend, index, where = quick_index(tmp_path)
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The boat is moored at pier nine", "OK")
    backend.say("console:direct", "Bought new oars", "Nice")
    await index.join(scope, "telegram:1")
    await index.join(scope, "console:direct")

    first = asked(await index.search(scope, "boat pier", join="telegram:1"))
    again = asked(await index.search(scope, "boat pier", join="telegram:1"))
    backend.say("console:direct", "The kayak is moored at pier nine too", "OK")  # another session of the scope
    later = asked(await index.search(scope, "kayak pier", join="telegram:1"))
    await index.stop()

    assert first == again == ["The boat is moored at pier nine"]
    assert later[0] == "The kayak is moored at pier nine too"
    assert where.on_loop() == [False, True, False]  # unmeasured; quick and caught up; behind: caught up in a thread


async def test_messages_the_prompt_shows_are_left_to_the_next_catch_up(tmp_path: Path) -> None:
    backend, index, where = quick_index(tmp_path)
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "We moored the boat at the marina", "OK")  # messages 0-3
    await index.join(scope, "telegram:1")
    await index.search(scope, "marina")
    backend.say("telegram:1", "The boat needs a new sail", "Noted")  # messages 4-7, all in the prompt

    shown = asked(await index.search(scope, "boat", shown=Shown("telegram:1", 4), join="telegram:1"))
    plain = asked(await index.search(scope, "sail"))
    await index.stop()

    assert shown == ["We moored the boat at the marina"]
    assert plain == ["The boat needs a new sail"]
    assert where.on_loop() == [False, True, False]


async def test_searches_with_and_without_the_second_pass_are_measured_apart(tmp_path: Path) -> None:
    backend, index, where = quick_index(tmp_path)
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The boat is moored at pier nine", "OK")
    await index.join(scope, "telegram:1")

    for follow in (False, True, False, True):
        assert asked(await index.search(scope, "boat pier", follow=follow)) == ["The boat is moored at pier nine"]
    await index.stop()

    assert where.on_loop() == [False, False, True, True]  # each kind unmeasured at first, then quick


class Slow(Where):
    """`Where`, spending at least `spend` seconds of CPU in the searches told to."""

    def __init__(self) -> None:
        super().__init__()
        self.spend = 0.0

    def __call__(
        self, index: MemoryIndex, query: Query, limit: int, since: float | None, until: float | None
    ) -> list[int]:
        started = time.thread_time()
        while time.thread_time() - started < self.spend:
            pass
        return super().__call__(index, query, limit, since, until)


async def test_one_slow_search_keeps_the_scope_on_the_loop_and_two_in_a_row_send_it_to_a_thread(
    tmp_path: Path,
) -> None:
    backend = Backend(SessionStore(tmp_path / "sessions"), FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "l"))
    index = MemoryIndexes(
        backend.logs, backend.members, tmp_path / "ws", tmp_path / "state", "UTC", clock=lambda: 1.78e9, quick=0.05
    )
    slow = Slow()
    index.rankers.append(slow)
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "The boat is moored at pier nine", "OK")
    await index.join(scope, "telegram:1")

    for spend in (0.0, 0.0, 0.06, 0.0, 0.06, 0.06, 0.0, 0.0):
        slow.spend = spend
        assert asked(await index.search(scope, "boat pier")) == ["The boat is moored at pier nine"]
    await index.stop()

    # unmeasured; quick; slow, but the one before was quick (as is the next); slow twice: the next in a thread
    assert slow.on_loop() == [False, True, True, True, True, True, False, True]
