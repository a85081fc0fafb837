"""Mattermost's WebSocket: authenticated by challenge, events handed on in order, resumed after a drop."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bot.errors import BusClosed, ChannelError, ChannelUnavailable

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

HELLO_TIMEOUT = 30.0
MAX_RECONNECT_DELAY = 30.0
OnEvent = Callable[[dict[str, Any]], Awaitable[None]]
"""on_event(event): handle one event frame; it has been published when this returns."""


class EventStream:
    """One bot's event connection; `start` connects (raising when refused), then a task reads until `stop`."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        token: str,
        on_event: OnEvent,
        reconnect_delay: float = 1.0,
    ) -> None:
        self._session = session
        self._url = f"{url.rstrip('/').replace('http', 'ws', 1)}/api/v4/websocket"
        self._token = token
        self._on_event = on_event
        self._reconnect_delay = reconnect_delay
        self._socket: aiohttp.ClientWebSocketResponse | None = None
        self._seq = itertools.count(1)
        self._connection_id = ""
        self._last_seq = -1
        self._task: asyncio.Task[None] | None = None
        self.connections = 0

    async def start(self) -> None:
        """Connect and authenticate; raise ChannelError when the token is refused, ChannelUnavailable when down."""
        await self._connect()
        self._task = asyncio.create_task(self._read_forever(), name="mattermost-events")

    async def stop(self) -> None:
        """Stop reading and close the connection."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._socket is not None:
            await self._socket.close()

    async def typing(self, channel_id: str, parent_id: str | None) -> None:
        """The `user_typing` action: "relaybot is typing…" in the channel (or thread) for a few seconds."""
        socket = self._socket
        if socket is None or socket.closed:
            return
        data = {"channel_id": channel_id, "parent_id": parent_id or ""}
        await socket.send_json({"seq": next(self._seq), "action": "user_typing", "data": data})

    async def _connect(self) -> None:
        import aiohttp

        params = {}
        if self._connection_id:  # ask the server to replay what this connection missed
            params = {"connection_id": self._connection_id, "sequence_number": str(self._last_seq)}
        auth = {"Authorization": f"Bearer {self._token}"}
        try:
            socket = await self._session.ws_connect(self._url, params=params, headers=auth, heartbeat=30)
        except aiohttp.WSServerHandshakeError as exc:
            if exc.status in (401, 403):
                raise ChannelError(f"the WebSocket refused the token (HTTP {exc.status})") from exc
            raise ChannelUnavailable(f"WebSocket handshake failed: HTTP {exc.status}") from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise ChannelUnavailable(f"WebSocket connection failed: {exc}") from exc
        try:
            async with asyncio.timeout(HELLO_TIMEOUT):
                await self._authenticate(socket)
        except BaseException:
            await socket.close()
            raise
        self._socket = socket
        self.connections += 1

    async def _authenticate(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        """Send the authentication challenge and wait for the server's hello."""
        seq = next(self._seq)
        await socket.send_json({"seq": seq, "action": "authentication_challenge", "data": {"token": self._token}})
        async for frame in socket:
            data = _decoded(frame)
            if data.get("seq_reply") == seq and data.get("status") != "OK":
                raise ChannelError(f"the WebSocket refused the token: {data.get('error') or data}")
            if data.get("event") == "hello":
                connection_id = str((data.get("data") or {}).get("connection_id") or "")
                if connection_id != self._connection_id:
                    self._connection_id, self._last_seq = connection_id, int(data.get("seq") or 0)
                return
        raise ChannelUnavailable(f"the WebSocket closed before its hello (code {socket.close_code})")

    async def _read_forever(self) -> None:
        """Hand each event on in order; after a drop, reconnect with growing delays until `stop`."""
        delay = self._reconnect_delay
        while True:
            if self._socket is not None:
                try:
                    await self._read(self._socket)
                except BusClosed:
                    logger.info("mattermost: the bus is closed; no more events are taken")
                    return
            try:
                await self._connect()
            except ChannelError as exc:
                logger.warning("mattermost: reconnecting in %.0fs: %s", delay, exc)
                self._socket = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RECONNECT_DELAY)
                continue
            logger.info("mattermost: WebSocket reconnected (connection %d)", self.connections)
            delay = self._reconnect_delay

    async def _read(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        async for frame in socket:
            data = _decoded(frame)
            if "event" not in data:
                continue  # a reply to one of our actions
            if isinstance(data.get("seq"), int):
                self._last_seq = data["seq"]
            try:
                await self._on_event(data)
            except BusClosed:
                raise
            except Exception:
                logger.exception("mattermost: could not handle a %s event", data.get("event"))


def _decoded(frame: aiohttp.WSMessage) -> dict[str, Any]:
    import aiohttp

    if frame.type != aiohttp.WSMsgType.TEXT:
        return {}
    try:
        data = json.loads(frame.data)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
