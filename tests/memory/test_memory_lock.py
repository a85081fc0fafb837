"""The memory lock on the redis backend: one writer per scope across processes, other scopes never wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.cluster.redis import RedisState
from bot.memory.files import MemoryScope
from bot.memory.locks import RedisScopeLocks, ScopeLocks
from tests.support.lock_attempts import lock_attempts, tried_since


def scopes(workspace: Path) -> tuple[MemoryScope, MemoryScope]:
    return (
        MemoryScope(workspace / "memory", is_main=True),
        MemoryScope(workspace / "memory" / "chats" / "telegram_7", is_main=False),
    )


async def test_a_scope_has_one_writer_across_processes_and_other_scopes_do_not_wait(
    redis_url: str, tmp_path: Path
) -> None:
    first, second = RedisState(redis_url), RedisState(redis_url)
    main, _ = scopes(tmp_path / "ws")
    here = RedisScopeLocks(first, tmp_path / "ws", wait=0.2)
    there = RedisScopeLocks(second, Path("/elsewhere/ws"), wait=0.2)  # the same workspace, mounted elsewhere
    assert here.name(main) == there.name(scopes(Path("/elsewhere/ws"))[0]) == "relaybot:memory-lock:memory"

    async with here.hold(main) as held:
        assert held
        async with there.hold(scopes(Path("/elsewhere/ws"))[0]) as other_main:
            assert not other_main  # waited 0.2 s, then gave up: the round is tried again later
        async with there.hold(scopes(Path("/elsewhere/ws"))[1]) as other_chat:
            assert other_chat
    async with there.hold(scopes(Path("/elsewhere/ws"))[0]) as after:
        assert after
    await first.aclose()
    await second.aclose()


async def test_a_waiting_writer_enters_once_the_holder_releases(redis_url: str, tmp_path: Path) -> None:
    first, second = RedisState(redis_url), RedisState(redis_url)
    main, _ = scopes(tmp_path)
    order: list[str] = []
    entered, release = asyncio.Event(), asyncio.Event()

    async def holder() -> None:
        async with RedisScopeLocks(first, tmp_path).hold(main):
            order.append("first in")
            entered.set()
            await release.wait()
            order.append("first out")

    task = asyncio.create_task(holder())
    await asyncio.wait_for(entered.wait(), 5)
    tries = await lock_attempts(first)
    waiter = asyncio.create_task(_enter(RedisScopeLocks(second, tmp_path, wait=5), main, order))
    await tried_since(first, tries)
    assert order == ["first in"]
    release.set()
    await asyncio.gather(task, waiter)
    assert order == ["first in", "first out", "second in"]
    await first.aclose()
    await second.aclose()


async def _enter(locks: RedisScopeLocks, scope: MemoryScope, order: list[str]) -> None:
    async with locks.hold(scope) as held:
        assert held
        order.append("second in")


async def test_a_holder_that_died_frees_the_scope_after_the_lock_timeout(redis_url: str, tmp_path: Path) -> None:
    first, second = RedisState(redis_url), RedisState(redis_url)
    main, _ = scopes(tmp_path)
    dead = first.aclient.lock(RedisScopeLocks(first, tmp_path).name(main), timeout=0.3)
    assert await dead.acquire(blocking=False)  # never released, as by a killed process
    async with RedisScopeLocks(second, tmp_path, wait=2).hold(main) as held:
        assert held
    await first.aclose()
    await second.aclose()


async def test_a_scope_lock_nobody_holds_is_forgotten(tmp_path: Path) -> None:
    locks = ScopeLocks()
    for n in range(1000):
        async with locks.hold(MemoryScope(tmp_path / "memory" / "chats" / f"telegram_{n}", is_main=False)) as held:
            assert held and locks.held == 1
    assert locks.held == 0
