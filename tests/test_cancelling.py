"""cancel_and_wait: a task that swallowed a cancel is cancelled again until it ends."""

from __future__ import annotations

import asyncio

from bot.cancelling import cancel_and_wait


async def test_a_task_that_swallows_a_cancel_is_cancelled_again_until_it_ends() -> None:
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while True:
            try:
                await asyncio.Event().wait()  # never set: only a cancel ends the wait
            except asyncio.CancelledError:
                if swallowed:
                    raise
                swallowed += 1  # as asyncio.wait_for may on Python 3.11

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    await asyncio.wait_for(cancel_and_wait(task, None), 1)
    assert task.cancelled() and swallowed == 1
