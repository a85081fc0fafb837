"""The browser's way in: POST /login trades a token for a session cookie; /session says who; /logout ends it."""

from __future__ import annotations

from aiohttp import web

from channels.api.web.auth import Caller
from channels.api.web.gate import Gatekeeper
from channels.api.web.sessions import WebSession, clear_cookie, set_cookie


def session_body(caller: Caller, session: WebSession | None) -> dict[str, object]:
    """What the pages learn about their login: who, and the CSRF token for their admin requests."""
    csrf = session.csrf if session else None
    return {"name": caller.name, "trust": caller.trust.value, "owner": caller.is_owner, "csrf": csrf}


def add_routes(app: web.Application, gate: Gatekeeper) -> None:
    """Mount POST /login, GET /session and POST /logout."""

    async def login(request: web.Request) -> web.Response:
        gate.origins.check(request)
        form = await request.post()
        token = form.get("token")
        caller = gate.caller_for(request, token.strip() if isinstance(token, str) else "")
        session = gate.sessions.open(caller)
        response = web.json_response(session_body(caller, session))
        set_cookie(response, request, session)
        return response

    async def current(request: web.Request) -> web.Response:
        access = gate.access(request)
        return web.json_response(session_body(access.caller, access.session))

    async def logout(request: web.Request) -> web.Response:
        gate.check_change(request)
        session = gate.sessions.of(request)
        if session is not None:
            gate.sessions.close(session)
        response = web.json_response({"ok": True})
        clear_cookie(response)
        return response

    app.router.add_post("/login", login)
    app.router.add_get("/session", current)
    app.router.add_post("/logout", logout)
