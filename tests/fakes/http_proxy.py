"""A forwarding HTTP proxy on 127.0.0.1 for plain-HTTP targets: it records what passed and relays it whole."""

from __future__ import annotations

from aiohttp import ClientSession, web

from tests.fakes.loopback import LoopbackSite

_HOP_BY_HOP = frozenset({"host", "connection", "proxy-connection", "keep-alive", "transfer-encoding", "content-length"})


class ForwardingProxy:
    """Takes absolute-form requests (`POST http://host:port/path`), as clients send them to `HTTP_PROXY`."""

    def __init__(self) -> None:
        self.seen: list[str] = []  # "METHOD URL" of each request that went through
        self._site: LoopbackSite | None = None
        self._client: ClientSession | None = None
        self.url = ""

    async def __aenter__(self) -> ForwardingProxy:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._site = LoopbackSite(app)
        self.url = f"http://127.0.0.1:{await self._site.start()}"
        self._client = ClientSession(trust_env=False, auto_decompress=False)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._client is not None:
            await self._client.close()
        if self._site is not None:
            await self._site.stop()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._client is not None
        target = str(request.url)
        self.seen.append(f"{request.method} {target}")
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        async with self._client.request(request.method, target, data=await request.read(), headers=headers) as reply:
            body = await reply.read()
            kept = {k: v for k, v in reply.headers.items() if k.lower() not in _HOP_BY_HOP}
            return web.Response(body=body, status=reply.status, headers=kept)
