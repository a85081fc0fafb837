"""The gateway's background tasks: each one named, kept until it ends, and cancelled and awaited on stop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from bot.cancelling import cancel_and_wait


class OwnedTasks:
    """Tasks started for the gateway; a finished one is dropped, `stop` cancels the rest and waits for them."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def __len__(self) -> int:
        """How many of the tasks are still running."""
        return len(self._tasks)

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Run `work` as a task owned here."""
        task = asyncio.create_task(work, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        """Cancel every task still running and wait until each has ended."""
        tasks, self._tasks = list(self._tasks), set()
        await cancel_and_wait(*tasks)
