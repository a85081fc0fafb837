"""`POST /hooks/<name>` on the gateway's HTTP server: the body read within the trigger's size limit, then the desk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.triggers.desk import HookRequest, TriggerDesk

if TYPE_CHECKING:
    from aiohttp import web

HOOKS = "/hooks/{name}"


def hook_routes(desk: TriggerDesk) -> list[web.RouteDef]:
    """The one route serving every trigger (aiohttp is imported here, once triggers are configured)."""
    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        limit = desk.max_bytes(name)
        if limit is None:
            return web.json_response({"error": "no such trigger"}, status=404)
        body = await _body_within(request, limit)
        if body is None:
            return web.json_response({"error": f"the body is over {limit} bytes"}, status=413)
        headers = {key.lower(): value for key, value in request.headers.items()}
        answer = await desk.receive(HookRequest(name, headers, body, request.remote or ""))
        return web.json_response(answer.body, status=answer.status, headers=answer.headers)

    return [web.post(HOOKS, handle)]


async def _body_within(request: web.Request, limit: int) -> bytes | None:
    """The raw body, or None once it is over `limit` bytes (read no further than that)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    body = bytearray()
    async for chunk in request.content.iter_chunked(65536):
        body += chunk
        if len(body) > limit:
            return None
    return bytes(body)
