"""A trigger's rate limit: at most `count` deliveries within any `window` seconds, with the wait until the next."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable


class RateLimit:
    """A sliding window of accepted deliveries; `clock` is injected so tests need no sleeps."""

    def __init__(self, count: int, window: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._count = count
        self._window = window
        self._clock = clock
        self._taken: deque[float] = deque()

    def take(self) -> int | None:
        """Count one delivery and return None, or return the whole seconds to wait (Retry-After) and count nothing."""
        now = self._clock()
        while self._taken and self._taken[0] <= now - self._window:
            self._taken.popleft()
        if len(self._taken) >= self._count:
            return max(1, math.ceil(self._taken[0] + self._window - now))
        self._taken.append(now)
        return None
