"""Flood control: every sender but an owner may send `access.rate_limit` messages a minute."""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import Enum
from typing import Protocol

from bot.bus import InboundMessage, Trust

WINDOW = 60.0


class Verdict(Enum):
    """What to do with one message."""

    PASS = "pass"
    DROP = "drop"
    DROP_AND_NOTIFY = "drop and notify"


def flood_notice(per_minute: int) -> str:
    """The one notice a flooding sender gets per minute."""
    return (
        f"You're sending more than {per_minute} messages a minute, so I'm skipping some. "
        "Please wait a minute before sending more."
    )


class RateLimit(Protocol):
    """A per-sender flood limit: in this process (`SenderRateLimit`) or shared in Redis (`RedisSenderRateLimit`)."""

    per_minute: int

    def check(self, message: InboundMessage) -> Verdict: ...


class SenderRateLimit:
    """A sliding one-minute window per channel and sender; dropped messages don't count against it.

    Senders idle for longer than the window are forgotten (swept at most once a window), so the state
    holds only the senders of the last minute or two, however many have ever written.
    """

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._seen: dict[tuple[str, str], list[float]] = {}  # a list: a deque's first block alone is 600 bytes
        self._noticed: dict[tuple[str, str], float] = {}
        self._swept = clock()

    @property
    def tracked(self) -> int:
        """How many senders the limiter holds state for."""
        return len(self._seen.keys() | self._noticed.keys())

    def check(self, message: InboundMessage) -> Verdict:
        """Pass owners and senders within the limit; past it drop, notifying at most once a minute."""
        if message.trust is Trust.OWNER or self.per_minute <= 0:
            return Verdict.PASS
        now = self._clock()
        if now - self._swept >= WINDOW:
            self._sweep(now)
        key = (message.chat.channel, message.sender_id)
        times = self._seen.setdefault(key, [])
        while times and now - times[0] >= WINDOW:
            del times[0]  # at most `per_minute` long
        if len(times) < self.per_minute:
            times.append(now)
            self._noticed.pop(key, None)
            return Verdict.PASS
        last = self._noticed.get(key)
        if last is not None and now - last < WINDOW:
            return Verdict.DROP
        self._noticed[key] = now
        return Verdict.DROP_AND_NOTIFY

    def _sweep(self, now: float) -> None:
        """Drop every sender whose last message and last notice are both older than the window."""
        self._swept = now
        for key in [key for key, times in self._seen.items() if not times or now - times[-1] >= WINDOW]:
            del self._seen[key]
        for key in [key for key, noticed in self._noticed.items() if now - noticed >= WINDOW]:
            del self._noticed[key]
