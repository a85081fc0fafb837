"""Stopping a task for sure: on Python 3.11 a cancel can be swallowed, so it is repeated until the task ends.

`asyncio.wait_for` before Python 3.12 returns the inner result and drops the cancellation when both land
in the same loop iteration (CPython gh-86296). redis-py sends every command through `wait_for` once a
socket timeout is set, so a task cancelled mid-command may carry on as if nothing happened; a loop in
it then runs forever and whoever awaits it hangs.
"""

from __future__ import annotations

import asyncio
import logging

logger = logging.getLogger(__name__)

RETRY_EVERY = 0.05


async def cancel_and_wait(*tasks: asyncio.Task[object] | None) -> None:
    """Cancel the tasks and wait until every one has ended, cancelling again any that swallowed it."""
    pending = {task for task in tasks if task is not None and not task.done()}
    attempts = 0
    while pending:
        for still_running in pending:
            still_running.cancel()
        _, pending = await asyncio.wait(pending, timeout=RETRY_EVERY)
        attempts += 1
        if pending and attempts == 20:
            logger.warning("tasks still running a second after cancel: %s", ", ".join(t.get_name() for t in pending))
    for task in tasks:
        if task is not None and task.done() and not task.cancelled() and task.exception() is not None:
            logger.error("task %s had failed: %r", task.get_name(), task.exception())
