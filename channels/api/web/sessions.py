"""Browser sessions: a login trades a token for a random session id in an HttpOnly cookie, with its own CSRF token."""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from aiohttp import web

from bot.storage.recent import RecentMap
from channels.api.web.auth import Caller

COOKIE = "relaybot_session"
CSRF_HEADER = "X-CSRF-Token"
LIFETIME = 7 * 24 * 3600.0
MAX_SESSIONS = 1000


@dataclass(frozen=True, slots=True)
class WebSession:
    """One logged-in browser: who it acts as, the CSRF token its admin requests must carry, when it ends."""

    id: str
    caller: Caller
    csrf: str
    expires: float

    def csrf_matches(self, given: str) -> bool:
        """Whether a request's CSRF token is this session's (constant time)."""
        return hmac.compare_digest(self.csrf.encode(), given.encode())


class WebSessions:
    """The live browser sessions, in memory: a restart logs every browser out."""

    def __init__(self, clock: Callable[[], float] = time.time, make_id: Callable[[], str] | None = None) -> None:
        self._clock = clock
        self._make_id = make_id or (lambda: secrets.token_urlsafe(32))
        self._sessions: RecentMap[str, WebSession] = RecentMap(MAX_SESSIONS)

    def open(self, caller: Caller) -> WebSession:
        """A new session for a caller; the oldest one goes when MAX_SESSIONS are live."""
        now = self._clock()
        for expired in [key for key, session in self._sessions.items() if session.expires <= now]:
            self._sessions.pop(expired)
        session = WebSession(self._make_id(), caller, self._make_id(), now + LIFETIME)
        self._sessions[session.id] = session
        return session

    def of(self, request: web.Request) -> WebSession | None:
        """The live session a request's cookie names, or None."""
        session = self._sessions.get(request.cookies.get(COOKIE, ""))
        if session is None or session.expires <= self._clock():
            return None
        return session

    def close(self, session: WebSession) -> None:
        """End a session (logout)."""
        self._sessions.pop(session.id, None)


def set_cookie(response: web.StreamResponse, request: web.Request, session: WebSession) -> None:
    """The session cookie: HttpOnly, SameSite=Strict, Secure when the request came over TLS."""
    response.set_cookie(
        COOKIE, session.id, max_age=int(LIFETIME), path="/", httponly=True, samesite="Strict", secure=request.secure
    )


def clear_cookie(response: web.StreamResponse) -> None:
    """Tell the browser to forget the session cookie."""
    response.del_cookie(COOKIE, path="/")
