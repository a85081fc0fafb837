"""Waiting on state that no event reports (Redis streams, another process's files): check again, bounded."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def until(check: Callable[[], bool | Awaitable[bool]], timeout: float, interval: float = 0.02) -> None:
    """Return once `check()` holds, checking every `interval` seconds; after `timeout` seconds raise TimeoutError."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if await result if inspect.isawaitable(result) else result:
                return
            await asyncio.sleep(interval)


def until_blocking(check: Callable[[], bool], timeout: float, interval: float = 0.02) -> None:
    """`until` for code outside an event loop (a session fixture starting a server); raise TimeoutError after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"not so after {timeout}s")
        time.sleep(interval)


async def accepts(port: int) -> bool:
    """Whether a server listens on 127.0.0.1:`port` (a check for `until` while a child process starts)."""
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return False
    writer.close()
    await writer.wait_closed()
    return True
