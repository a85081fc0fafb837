"""signal-cli's event stream (`GET /api/v1/events`, server-sent events), read in order and reopened after a drop."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bot.errors import BusClosed, ChannelError, ChannelUnavailable

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

READ_TIMEOUT = 60.0  # signal-cli sends a keep-alive every 15 s: a minute of silence is a dead connection
MAX_RECONNECT_DELAY = 60.0
OnEvent = Callable[[dict[str, Any]], Awaitable[None]]
"""on_event(event): handle one `receive` event; it has been published when this returns."""


class EventStream:
    """One account's event stream; `start` opens it (raising when the daemon is down), then a task reads it."""

    def __init__(
        self, session: aiohttp.ClientSession, url: str, account: str, on_event: OnEvent, reconnect_delay: float = 1.0
    ) -> None:
        self._session = session
        self._url = f"{url.rstrip('/')}/api/v1/events"
        self._account = account
        self._on_event = on_event
        self._reconnect_delay = reconnect_delay
        self._response: aiohttp.ClientResponse | None = None
        self._task: asyncio.Task[None] | None = None
        self.connections = 0

    async def start(self) -> None:
        """Open the stream (ChannelUnavailable when the daemon is down) and read it in a task."""
        self._response = await self._open()
        self._task = asyncio.create_task(self._read_forever(), name="signal-events")

    async def stop(self) -> None:
        """Stop reading and close the stream."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._response is not None:
            self._response.close()

    async def _open(self) -> aiohttp.ClientResponse:
        import aiohttp

        timeout = aiohttp.ClientTimeout(total=None, sock_connect=10, sock_read=READ_TIMEOUT)
        try:
            response = await self._session.get(self._url, params={"account": self._account}, timeout=timeout)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ChannelUnavailable(f"signal-cli's event stream is not reachable at {self._url}: {exc}") from exc
        if response.status != 200:
            response.close()
            raise ChannelError(f"signal-cli refused the event stream (HTTP {response.status}); is the account right?")
        self.connections += 1
        return response

    async def _read_forever(self) -> None:
        """Hand each event on in order; when the stream ends, reopen it with growing delays until `stop`."""
        delay = self._reconnect_delay
        while True:
            if self._response is not None:
                try:
                    await self._read(self._response)
                except BusClosed:
                    logger.info("signal: the bus is closed; no more events are taken")
                    return
                except Exception as exc:
                    logger.info("signal: the event stream broke off: %s", exc)
                self._response.close()
                self._response = None
            try:
                self._response = await self._open()
            except ChannelError as exc:
                level = logging.WARNING if delay == self._reconnect_delay else logging.INFO
                logger.log(level, "signal: daemon unreachable, retrying in %.0fs: %s", delay, exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RECONNECT_DELAY)
                continue
            logger.info("signal: event stream reopened (connection %d)", self.connections)
            delay = self._reconnect_delay

    async def _read(self, response: aiohttp.ClientResponse) -> None:
        async for name, data in server_sent_events(response.content):
            if name != "receive":
                continue
            try:
                event = json.loads(data)
            except ValueError:
                logger.warning("signal: skipped an event that is not JSON")
                continue
            try:
                await self._on_event(event)
            except BusClosed:
                raise
            except Exception:
                logger.exception("signal: could not handle an event")


async def server_sent_events(lines: aiohttp.StreamReader) -> AsyncIterator[tuple[str, str]]:
    """(event name, data) of each event of a text/event-stream; comments (keep-alives) are skipped."""
    name, data = "message", list[str]()
    async for raw in lines:
        line = raw.decode("utf-8").rstrip("\r\n")
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = "message", []
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
