"""The web pages: the chat at `/` (a login form until the browser has a session) and its static files."""

from __future__ import annotations

from pathlib import Path

from aiohttp import web

from channels.api.hub import ApiSessions, session_chat

STATIC = Path(__file__).parent / "static"


def add_routes(app: web.Application, channel: ApiSessions) -> None:
    """Mount `/`, `/history` and `/static/`; the page itself holds no data, every data request is authenticated."""

    async def chat_page(request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "chat.html")

    async def history(request: web.Request) -> web.Response:
        caller = channel.gate.check(request)
        chat = session_chat(caller, request.query.get("session"))
        return web.json_response({"session": chat.thread_id, "messages": channel.history(chat.session_key)})

    app.router.add_get("/", chat_page)
    app.router.add_get("/history", history)
    app.router.add_static("/static/", STATIC)
