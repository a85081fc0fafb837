"""The idle timeout: silence, not the whole, is bounded; every touch starts the silence again (in virtual time)."""

import asyncio

import pytest

from bot.llm.idle_timeout import IdleTimeout
from tests.support.virtual_time import in_virtual_time


def test_a_block_touched_more_often_than_its_timeout_runs_past_it() -> None:
    async def main() -> float:
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with IdleTimeout(0.1) as idle:
            for _ in range(6):
                await asyncio.sleep(0.04)  # virtual: the loop's clock jumps 0.04 s
                idle.touch()
        return loop.time() - started

    assert in_virtual_time(main()) == pytest.approx(0.24)


def test_silence_longer_than_the_timeout_raises_timeout_error_after_the_last_touch() -> None:
    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        touched = 0.0
        with pytest.raises(TimeoutError):
            async with IdleTimeout(0.1) as idle:
                await asyncio.sleep(0.05)
                idle.touch()
                touched = loop.time()
                await asyncio.Event().wait()
        return touched, loop.time()

    touched, raised = in_virtual_time(main())
    assert touched == pytest.approx(0.05) and raised - touched == pytest.approx(0.1)


def test_an_idle_timeout_that_did_not_fire_leaves_the_task_uncancelled() -> None:
    async def main() -> int:
        async with IdleTimeout(0.05):
            pass
        await asyncio.sleep(0.1)  # virtual: past the moment its timer would have fired
        task = asyncio.current_task()
        assert task is not None
        return task.cancelling()

    assert in_virtual_time(main()) == 0
