"""The fake MCP server over streamable HTTP on 127.0.0.1: POST /mcp answered with JSON (no session, no SSE)."""

from __future__ import annotations

from aiohttp import web

from tests.fakes.loopback import LoopbackSite
from tests.fakes.mcp_server import answer


class FakeMCPHttp:
    """Serves the fake MCP server's tools at `url` while entered; records each request's headers."""

    def __init__(self) -> None:
        self.headers: list[dict[str, str]] = []
        self._site: LoopbackSite | None = None
        self._port = 0

    @property
    def url(self) -> str:
        """The URL to configure as mcp_servers.<name>.url."""
        return f"http://127.0.0.1:{self._port}/mcp"

    async def __aenter__(self) -> FakeMCPHttp:
        app = web.Application()
        app.router.add_post("/mcp", self._post)
        self._site = LoopbackSite(app)
        self._port = await self._site.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._site is not None:
            await self._site.stop()

    async def _post(self, request: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.headers.append(headers)
        response = answer(await request.json(), headers)
        if response is None:
            return web.Response(status=202)
        return web.json_response(response)
