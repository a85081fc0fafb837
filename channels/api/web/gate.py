"""Authenticates every request: a bearer token (scripts) or a browser session cookie; never a token in the URL."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass

from aiohttp import web

from channels.api.web.auth import Caller, FailureLockout, TokenBook
from channels.api.web.origins import OriginPolicy
from channels.api.web.sessions import CSRF_HEADER, WebSession, WebSessions

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Access:
    """Who a request acts as, and the browser session it came through (None for a bearer token)."""

    caller: Caller
    session: WebSession | None


def refusal(
    error: type[web.HTTPException], message: str, kind: str, code: str, headers: dict[str, str] | None = None
) -> web.HTTPException:
    """An HTTP error whose body is OpenAI's error shape, so its clients (and the SDK) show the message."""
    body = json.dumps({"error": {"message": message, "type": kind, "code": code}})
    return error(text=body, content_type="application/json", headers=headers)


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
        address = request.remote or "?"
        if self._lockout.locked(address):
            wait = math.ceil(self._lockout.retry_after(address))
            raise refusal(
                web.HTTPTooManyRequests,
                f"too many wrong tokens from this address; try again in {wait}s",
                "rate_limit_error",
                "locked_out",
                {"Retry-After": str(wait)},
            )

    def caller_for(self, request: web.Request, token: str) -> Caller:
        """The caller a presented token belongs to; a wrong one counts against the address's lockout."""
        address = request.remote or "?"
        self.refuse_locked(request)
        caller = self._book.caller(token) if token else None
        if caller is None:
            if token and self._lockout.failed(address):
                logger.warning("API: %s sent too many wrong tokens; refused for a minute", address)
            raise refusal(
                web.HTTPUnauthorized,
                "a valid API token is needed (Authorization: Bearer …)",
                "invalid_request_error",
                "invalid_api_key",
                {"WWW-Authenticate": "Bearer"},
            )
        return caller

    def access(self, request: web.Request, owner_only: bool = False) -> Access:
        """The request's caller, by bearer token or session cookie; raise an HTTP error otherwise."""
        token = bearer_token(request)
        session = None if token is not None else self.sessions.of(request)
        caller = session.caller if session is not None else self.caller_for(request, token or "")
        if owner_only and not caller.is_owner:
            raise refusal(web.HTTPUnauthorized, "an owner token is needed", "invalid_request_error", "not_owner")
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
