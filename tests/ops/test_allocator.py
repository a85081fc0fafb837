"""The allocator's settings: glibc's arenas limited at start, freed pages handed back once the turns go quiet."""

from __future__ import annotations

import os
import subprocess
import sys

from bot.bus import ChatRef
from bot.events import EventBus, TurnFinished, TurnStarted
from bot.ops.allocator import QuietTrim
from tests.support.polling import until

CHAT = ChatRef.parse("telegram:1")


def started(turn: str) -> TurnStarted:
    return TurnStarted(CHAT, turn)


def finished(turn: str) -> TurnFinished:
    return TurnFinished(CHAT, turn, "answered", 1, 0.01)


async def test_trims_once_no_turn_runs_and_not_while_one_does() -> None:
    events, calls = EventBus(), []
    trim = QuietTrim(events, quiet=0.0, gap=0.0, trim=lambda: calls.append("trim"))
    events.emit(started("a"))
    events.emit(started("b"))
    events.emit(finished("a"))
    assert not trim.scheduled and calls == []  # no trim waits while turn b runs
    events.emit(finished("b"))
    await until(lambda: trim.trims == 1, timeout=5)
    assert calls == ["trim"]
    await trim.stop()


async def test_a_turn_starting_before_the_quiet_spell_ends_puts_the_trim_off() -> None:
    events, calls = EventBus(), []
    trim = QuietTrim(events, quiet=0.0, gap=0.0, trim=lambda: calls.append("trim"))
    events.emit(started("a"))
    events.emit(finished("a"))
    events.emit(started("b"))  # before the loop ran the timer
    assert not trim.scheduled and calls == []
    events.emit(finished("b"))
    await until(lambda: trim.trims == 1, timeout=5)
    await trim.stop()


PROBE = """
from bot.ops.allocator import QuietTrim, limit_arenas
from bot.events import EventBus
print(limit_arenas(), QuietTrim(EventBus()).trims)
"""


def probe(env: dict[str, str]) -> str:
    return subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_arenas_are_limited_on_glibc_unless_malloc_arena_max_is_set() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    glibc = bool(os.confstr("CS_GNU_LIBC_VERSION")) if hasattr(os, "confstr") else False
    assert probe(env) == f"{glibc} 0"
    assert probe({**env, "MALLOC_ARENA_MAX": "4"}) == "False 0"
