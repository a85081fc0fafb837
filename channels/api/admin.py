"""The owner's dashboard at /admin: a static page plus JSON state and actions (same origin, CSRF token), owners only."""

from __future__ import annotations

from typing import Any, Protocol

from aiohttp import web

from channels.api.pages import STATIC
from channels.api.web.gate import Gatekeeper


class AdminBackend(Protocol):
    """What the core offers the dashboard: a snapshot, and actions run by the same code as the CLI."""

    async def snapshot(self) -> dict[str, Any]: ...

    async def act(self, request: dict[str, Any]) -> dict[str, Any]: ...


def add_routes(app: web.Application, gate: Gatekeeper, backend: AdminBackend) -> None:
    """Mount /admin (the page holds no data; it logs in like the chat), /admin/state and /admin/action."""

    async def page(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "admin.html")

    async def state(request: web.Request) -> web.Response:
        gate.check(request, owner_only=True)
        return web.json_response(await backend.snapshot())

    async def action(request: web.Request) -> web.Response:
        gate.check_change(request, owner_only=True)
        try:
            body = await request.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="send a JSON object with an op")
        result = await backend.act(body)
        return web.json_response(result, status=200 if result.get("ok") else 400)

    app.router.add_get("/admin", page)
    app.router.add_get("/admin/state", state)
    app.router.add_post("/admin/action", action)
