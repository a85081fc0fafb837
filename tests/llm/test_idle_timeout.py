"""The idle timeout: silence, not the whole, is bounded; every touch starts the silence again."""

import asyncio

import pytest

from bot.llm.idle_timeout import IdleTimeout


async def test_a_block_touched_more_often_than_its_timeout_runs_past_it() -> None:
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with IdleTimeout(0.1) as idle:
        for _ in range(6):
            await asyncio.sleep(0.04)
            idle.touch()
    assert loop.time() - started >= 0.24


async def test_silence_longer_than_the_timeout_raises_timeout_error_after_the_last_touch() -> None:
    loop = asyncio.get_running_loop()
    touched = 0.0
    with pytest.raises(TimeoutError):
        async with IdleTimeout(0.1) as idle:
            await asyncio.sleep(0.05)
            idle.touch()
            touched = loop.time()
            await asyncio.Event().wait()
    assert loop.time() - touched >= 0.1


async def test_an_idle_timeout_that_did_not_fire_leaves_the_task_uncancelled() -> None:
    async with IdleTimeout(0.05):
        pass
    await asyncio.sleep(0.1)
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0
