"""One Discord address in front of several fake Discords, one per bot token, as discord.com is for many bots.

discord.py keeps its API base and gateway URL once per process, so two bots in one gateway reach the same
address: REST calls go to the fake whose token their `Authorization: Bot …` header carries; a gateway
connection is answered with HELLO, then handed whole to the fake whose token its IDENTIFY (or RESUME) carries.
Frames to the client are zlib-stream compressed here when it asked, one compressor per connection.
"""

from __future__ import annotations

import asyncio
import json
import zlib
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web

from tests.fakes.discord_server import API_PREFIX, FakeDiscord

_HOP_BY_HOP = {"content-length", "transfer-encoding", "content-encoding", "connection", "keep-alive"}


class DiscordFront:
    """Routes by bot token to `fakes`; the first fake answers what carries no token (webhooks, downloads)."""

    def __init__(self, *fakes: FakeDiscord) -> None:
        self._fakes = fakes
        self._runner: web.AppRunner | None = None
        self._http: aiohttp.ClientSession | None = None
        self._port = 0

    @property
    def api_base(self) -> str:
        """What every bot's `api_base` is."""
        return f"http://127.0.0.1:{self._port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        """What every bot's `gateway_url` is."""
        return f"ws://127.0.0.1:{self._port}/gateway"

    async def __aenter__(self) -> DiscordFront:
        self._http = aiohttp.ClientSession()
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_route("*", API_PREFIX + "/{path:.+}", self._rest)
        app.router.add_get("/gateway", self._gateway)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._http is not None:
            await self._http.close()

    def _by_token(self, token: str | None) -> FakeDiscord:
        return next((fake for fake in self._fakes if fake.token == token), self._fakes[0])

    async def _rest(self, request: web.Request) -> web.Response:
        assert self._http is not None
        token = request.headers.get("Authorization", "").removeprefix("Bot ")
        fake = self._by_token(token)
        target = fake.api_base + "/" + request.match_info["path"]
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP | {"host"}}
        async with self._http.request(
            request.method, target, params=request.query, headers=headers, data=await request.read()
        ) as answer:
            body = await answer.read()
            kept = {k: v for k, v in answer.headers.items() if k.lower() not in _HOP_BY_HOP}
            return web.Response(status=answer.status, body=body, headers=kept)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        assert self._http is not None
        client = web.WebSocketResponse(max_msg_size=0)
        await client.prepare(request)
        compressor = zlib.compressobj() if request.query.get("compress") == "zlib-stream" else None

        async def send(text: str) -> None:
            if compressor is None:
                await client.send_str(text)
            else:
                await client.send_bytes(compressor.compress(text.encode()) + compressor.flush(zlib.Z_SYNC_FLUSH))

        interval = int(self._fakes[0].heartbeat_interval * 1000)
        await send(json.dumps({"op": 10, "d": {"heartbeat_interval": interval}}))
        first: dict[str, Any] | None = None
        async for frame in client:
            if frame.type is not WSMsgType.TEXT:
                break
            data = json.loads(frame.data)
            if data.get("op") in (2, 6):
                first = data
                break
            if data.get("op") == 1:
                await send(json.dumps({"op": 11}))
        if first is None:
            return client
        fake = self._by_token((first.get("d") or {}).get("token"))
        query = {k: v for k, v in request.query.items() if k != "compress"}
        async with self._http.ws_connect(fake.gateway_url, params=query, max_msg_size=0) as backend:
            await backend.receive()  # its own HELLO: the client has had one
            await backend.send_str(json.dumps(first))
            await _pipe(client, backend, send)
        return client


async def _pipe(client: web.WebSocketResponse, backend: aiohttp.ClientWebSocketResponse, send: Any) -> None:
    """Frames both ways until either side closes; the backend's close code reaches the client."""

    async def upstream() -> None:
        async for frame in client:
            if frame.type is WSMsgType.TEXT:
                await backend.send_str(frame.data)
        await backend.close()

    async def downstream() -> None:
        async for frame in backend:
            if frame.type is WSMsgType.TEXT:
                await send(frame.data)
        await client.close(code=backend.close_code or 1000)

    tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
