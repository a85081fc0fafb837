"""Retrying transient failures: honour retry_after, else capped exponential backoff with jitter."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass
class RetryPolicy:
    """How often and how patiently to retry; `sleep` and `jitter` are injectable for tests."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 60.0
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    jitter: Callable[[], float] = random.random

    def delay(self, attempt: int) -> float:
        """Backoff before retry number `attempt` (1-based): exponential, capped, jittered."""
        return min(self.base_delay * 2 ** (attempt - 1), self.max_delay) * (0.5 + self.jitter() / 2)

    async def run(self, call: Callable[[], Awaitable[T]], what: str, retry_on: tuple[type[BaseException], ...]) -> T:
        """Await `call()`, retrying the `retry_on` failures; the last one propagates."""
        for attempt in range(1, self.attempts + 1):
            try:
                return await call()
            except retry_on as exc:
                if attempt == self.attempts:
                    logger.warning("%s failed after %d attempts: %s", what, attempt, exc)
                    raise
                wait = getattr(exc, "retry_after", None) or self.delay(attempt)
                logger.info("%s failed (%s); retry %d in %.1fs", what, exc, attempt, wait)
                await self.sleep(wait)
        raise AssertionError("unreachable")
