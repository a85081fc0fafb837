"""Waiting for what a fake server recorded, without polling."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


class RecordWaiter:
    """Fakes call `notify` after recording anything; tests `wait_until` a condition on the records holds."""

    def __init__(self) -> None:
        self._changed = asyncio.Condition()

    async def notify(self) -> None:
        """Wake every waiter to check its condition again."""
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, ready: Callable[[], bool], timeout: float, progress: Callable[[], str]) -> None:
        """Return once `ready()` holds; after `timeout` seconds raise TimeoutError saying `progress()`."""
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(ready)
        except TimeoutError:
            raise TimeoutError(f"after {timeout}s only {progress()}") from None
