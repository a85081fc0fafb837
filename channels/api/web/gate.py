"""Authenticates every request: a bearer token (scripts) or a browser session cookie; never a token in the URL."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from channels.api.web.auth import Caller, FailureLockout, TokenBook
from channels.api.web.origins import OriginPolicy
from channels.api.web.sessions import CSRF_HEADER, WebSession, WebSessions


@dataclass(frozen=True, slots=True)
class Access:
    """Who a request acts as, and the browser session it came through (None for a bearer token)."""

    caller: Caller
    session: WebSession | None


def bearer_token(request: web.Request) -> str | None:
    """The token of an `Authorization: Bearer …` header, if any."""
    header = request.headers.get("Authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None


class Gatekeeper:
    """401 for a missing or wrong token, 429 while the address is locked out, 403 for a foreign page or no CSRF."""

    def __init__(self, book: TokenBook, lockout: FailureLockout, sessions: WebSessions, origins: OriginPolicy) -> None:
        self._book = book
        self._lockout = lockout
        self.sessions = sessions
        self.origins = origins

    def refuse_locked(self, request: web.Request) -> None:
        """Raise HTTPTooManyRequests while the request's address is locked out."""
        if self._lockout.locked(request.remote or "?"):
            raise web.HTTPTooManyRequests(text="too many wrong tokens; try again in a minute")

    def caller_for(self, request: web.Request, token: str) -> Caller:
        """The caller a presented token belongs to; a wrong one counts against the address's lockout."""
        address = request.remote or "?"
        self.refuse_locked(request)
        caller = self._book.caller(token) if token else None
        if caller is None:
            if token:
                self._lockout.failed(address)
            raise web.HTTPUnauthorized(text="a valid API token is needed", headers={"WWW-Authenticate": "Bearer"})
        return caller

    def access(self, request: web.Request, owner_only: bool = False) -> Access:
        """The request's caller, by bearer token or session cookie; raise an HTTP error otherwise."""
        token = bearer_token(request)
        session = None if token is not None else self.sessions.of(request)
        caller = session.caller if session is not None else self.caller_for(request, token or "")
        if owner_only and not caller.is_owner:
            raise web.HTTPUnauthorized(text="an owner token is needed")
        return Access(caller, session)

    def check(self, request: web.Request, owner_only: bool = False) -> Caller:
        """The caller of a request that changes nothing."""
        return self.access(request, owner_only).caller

    def check_change(self, request: web.Request, owner_only: bool = False) -> Caller:
        """The caller of a state-changing request: same origin, and a session's CSRF token when by cookie."""
        self.origins.check(request)
        access = self.access(request, owner_only)
        if access.session is not None and not access.session.csrf_matches(request.headers.get(CSRF_HEADER, "")):
            raise web.HTTPForbidden(text=f"the {CSRF_HEADER} header is missing or wrong; reload the page")
        return access.caller
