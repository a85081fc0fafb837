"""An event loop on a virtual clock: when nothing is ready, time jumps to the next timer instead of passing.

Code that reads `loop.time()` and waits with `call_at`, `asyncio.sleep` or `asyncio.timeout` runs its
timeouts at once, in order, and sees exactly the durations it asked for. For pure asyncio code only:
a loop that also waits on sockets or threads would jump past them (a timeout armed there fires while a worker
thread still runs: wait for the work itself instead).
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    """Polls without blocking; a wait for a timer moves the loop's clock to it instead."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0 if timeout is not None else None)
        if not ready and timeout is not None and timeout > 0:
            self.now += timeout
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """A selector loop whose `time()` is the virtual clock its selector moves."""

    def __init__(self) -> None:
        self._jumping = _JumpingSelector()
        super().__init__(self._jumping)

    def time(self) -> float:
        return self._jumping.now


def in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    """Run `main` to its end on a fresh virtual-time loop and close the loop."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(main)
    finally:
        loop.close()
