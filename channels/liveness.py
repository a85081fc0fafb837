"""When a channel last heard from its platform: a poll that answered, or an event that arrived."""

from __future__ import annotations

import time
from collections.abc import Callable


class Liveness:
    """The time of the last successful poll or event; `timeout` is how long one long poll may take."""

    def __init__(self, timeout: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self._clock = clock
        self._last = clock()

    def beat(self) -> None:
        """Note a successful poll or an event from the platform."""
        self._last = self._clock()

    def age(self) -> float:
        """Seconds since the last beat (or since this was made)."""
        return self._clock() - self._last
