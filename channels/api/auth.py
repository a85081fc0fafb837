"""Who may use the API: bearer tokens with a name and a trust, and a lockout for addresses that guess."""

from __future__ import annotations

import hmac
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from aiohttp import web

from bot.bus import Trust
from bot.config.schema_channels import ApiTokenConfig

MAX_FAILURES = 5
WINDOW = 60.0


@dataclass(frozen=True, slots=True)
class Caller:
    """An authenticated token: its name keys the sessions, its trust is the sender's."""

    name: str
    trust: Trust
    is_owner: bool


def trust_of(role: str) -> Trust:
    """The bus trust for a configured role (the config allows only the four roles)."""
    return Trust(role)


class TokenBook:
    """The configured tokens; comparison in constant time, empty tokens ignored."""

    def __init__(self, tokens: Iterable[ApiTokenConfig]) -> None:
        self._tokens = [
            (t.token.get_secret_value().encode(), Caller(t.name, trust_of(t.trust), t.trust == "owner"))
            for t in tokens
            if t.token.get_secret_value()
        ]

    def caller(self, token: str) -> Caller | None:
        """The caller a token belongs to, or None."""
        given = token.encode()
        found = None
        for secret, caller in self._tokens:
            if hmac.compare_digest(secret, given):
                found = caller
        return found


class FailureLockout:
    """After MAX_FAILURES wrong tokens from one address within WINDOW seconds, refuse it for WINDOW seconds."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}

    def locked(self, address: str) -> bool:
        """Whether the address is refused right now."""
        until = self._locked_until.get(address)
        if until is None:
            return False
        if self._clock() < until:
            return True
        del self._locked_until[address]
        return False

    def failed(self, address: str) -> None:
        """Record a wrong token; the fifth within the window locks the address."""
        now = self._clock()
        recent = self._failures.setdefault(address, deque())
        recent.append(now)
        while recent and recent[0] <= now - WINDOW:
            recent.popleft()
        if len(recent) >= MAX_FAILURES:
            self._locked_until[address] = now + WINDOW
            del self._failures[address]


def token_of(request: web.Request) -> str | None:
    """The token a request carries: `Authorization: Bearer …`, else `?token=`."""
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        return header[7:].strip()
    return request.query.get("token")


class Gatekeeper:
    """Authenticates requests: 401 for a missing or wrong token, 429 while the address is locked out."""

    def __init__(self, book: TokenBook, lockout: FailureLockout) -> None:
        self._book = book
        self._lockout = lockout

    def check(self, request: web.Request, owner_only: bool = False) -> Caller:
        """The request's caller; raise HTTPUnauthorized or HTTPTooManyRequests otherwise."""
        address = request.remote or "?"
        if self._lockout.locked(address):
            raise web.HTTPTooManyRequests(text="too many wrong tokens; try again in a minute")
        token = token_of(request)
        caller = self._book.caller(token) if token else None
        if caller is None:
            if token:
                self._lockout.failed(address)
            raise web.HTTPUnauthorized(text="a valid API token is needed", headers={"WWW-Authenticate": "Bearer"})
        if owner_only and not caller.is_owner:
            raise web.HTTPUnauthorized(text="an owner token is needed")
        return caller
