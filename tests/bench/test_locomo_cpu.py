"""The CPU a coroutine costs: its own steps and its worker threads, not what other tasks do while it waits."""

import asyncio
import time

import pytest
from locomo.cpu import measured, workers_noted


def burn(seconds: float) -> None:
    started = time.thread_time()
    while time.thread_time() - started < seconds:
        pass


async def test_a_coroutine_costs_its_own_steps_and_its_workers_but_not_other_tasks() -> None:
    async def work() -> str:
        burn(0.02)
        await asyncio.to_thread(burn, 0.03)
        await asyncio.sleep(0.05)  # another task burns meanwhile
        return "done"

    async def other() -> None:
        await asyncio.sleep(0)
        burn(0.2)

    costs: list[float] = []
    with workers_noted():
        neighbour = asyncio.create_task(other())
        assert await measured(work, costs)() == "done"
        await neighbour
    assert 0.05 <= costs[0] < 0.15
    assert asyncio.to_thread.__module__ == "asyncio.threads"  # put back on the way out


async def test_an_error_reaches_the_caller_and_the_cost_is_still_noted() -> None:
    async def failing() -> None:
        await asyncio.sleep(0)
        raise ValueError("no")

    costs: list[float] = []
    with pytest.raises(ValueError, match="no"):
        await measured(failing, costs)()
    assert len(costs) == 1
