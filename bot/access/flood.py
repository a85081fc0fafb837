"""Flood control: every sender but an owner may send `access.rate_limit` messages a minute."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from enum import Enum
from typing import Protocol

from bot.bus import InboundMessage, Trust
from bot.storage.recent import RecentMap

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

    Senders are kept in the order of their last counted message and forgotten, oldest first, once that
    message is a window old, so the state holds the senders of the last minute alone, however many have
    ever written; each is a string key and a tuple of times (about 180 bytes).
    """

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self._clock = clock
        self._seen: RecentMap[str, tuple[float, ...]] = RecentMap(sys.maxsize)  # bounded by the window, not a count
        self._noticed: dict[str, float] = {}
        self._swept = clock()

    @property
    def tracked(self) -> int:
        """How many senders the limiter holds state for."""
        return len(self._noticed.keys() | set(self._seen))

    def check(self, message: InboundMessage) -> Verdict:
        """Pass owners and senders within the limit; past it drop, notifying at most once a minute."""
        if message.trust is Trust.OWNER or self.per_minute <= 0:
            return Verdict.PASS
        now = self._clock()
        self._forget(now)
        key = f"{message.chat.channel}:{message.sender_id}"
        times = tuple(at for at in self._seen.get(key, ()) if now - at < WINDOW)
        if len(times) < self.per_minute:
            self._seen[key] = (*times, now)  # to the end: the last counted message is the newest
            self._noticed.pop(key, None)
            return Verdict.PASS
        last = self._noticed.get(key)
        if last is not None and now - last < WINDOW:
            return Verdict.DROP
        self._noticed[key] = now
        return Verdict.DROP_AND_NOTIFY

    def _forget(self, now: float) -> None:
        """Drop the senders whose last counted message is a window old; notices older than a window, once a window."""
        self._seen.expire(lambda times: now - times[-1] >= WINDOW)
        if now - self._swept >= WINDOW:
            self._swept = now
            for key in [key for key, noticed in self._noticed.items() if now - noticed >= WINDOW]:
                del self._noticed[key]
