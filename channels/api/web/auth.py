"""Who may use the API: tokens with a name and a trust, and a lockout for addresses that guess."""

from __future__ import annotations

import hmac
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bot.bus import Trust
from bot.config.channels.api import ApiTokenConfig

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

    def retry_after(self, address: str) -> float:
        """Seconds until a locked-out address may try again (0 when it is not locked)."""
        return max(self._locked_until.get(address, 0.0) - self._clock(), 0.0)

    def failed(self, address: str) -> bool:
        """Record a wrong token; the fifth within the window locks the address (True then)."""
        now = self._clock()
        recent = self._failures.setdefault(address, deque())
        recent.append(now)
        while recent and recent[0] <= now - WINDOW:
            recent.popleft()
        if len(recent) >= MAX_FAILURES:
            self._locked_until[address] = now + WINDOW
            del self._failures[address]
            return True
        return False
