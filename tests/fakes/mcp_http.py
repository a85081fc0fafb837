"""The fake MCP server over streamable HTTP on 127.0.0.1: POST /mcp answered with JSON (no session, no SSE)."""

from __future__ import annotations

from aiohttp import web

from tests.fakes.loopback import LoopbackServer
from tests.fakes.mcp_server import answer


class FakeMCPHttp(LoopbackServer):
    """Serves the fake MCP server's tools at `url` while entered; records each request's headers."""

    def __init__(self) -> None:
        super().__init__()
        self.headers: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        """The URL to configure as mcp_servers.<name>.url."""
        return f"http://127.0.0.1:{self.port}/mcp"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/mcp", self._post)

    async def _post(self, request: web.Request) -> web.Response:
        headers = {name.lower(): value for name, value in request.headers.items()}
        self.headers.append(headers)
        response = answer(await request.json(), headers)
        if response is None:
            return web.Response(status=202)
        return web.json_response(response)
