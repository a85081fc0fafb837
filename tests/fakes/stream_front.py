"""The part every TCP front between the bot and a real server shares: a loopback listener, one tracked task per
connection, cutting them all, and waiting on what the front recorded."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Self

LOOPBACK = "127.0.0.1"


class StreamFront:
    """`async with` a front: the bot connects to `front.port`; each connection is the subclass's `_link`."""

    def __init__(self, server_port: int) -> None:
        self.server_port = server_port
        self.port = 0
        self._changed = asyncio.Condition()
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> Self:
        self._server = await asyncio.start_server(self._tracked, LOOPBACK, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._server is not None
        self._server.close()
        self.drop()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)

    def drop(self) -> None:
        """Cut every connection through the front, as a network failure would."""
        for writer in self._writers:
            writer.close()
        self._writers.clear()

    async def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 15) -> None:
        """Return once `check()` holds, re-checked on every record; TimeoutError naming `what` otherwise."""
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(check)
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for {what}") from None

    async def _tracked(self, bot_reader: asyncio.StreamReader, bot_writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links.add(task)
        try:
            await self._link(bot_reader, bot_writer)
        finally:
            self._links.discard(task)

    async def _link(self, bot_reader: asyncio.StreamReader, bot_writer: asyncio.StreamWriter) -> None:
        """Relay one connection of the bot's until either side closes it."""
        raise NotImplementedError
