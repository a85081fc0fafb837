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

# Given a failure and the 1-based attempt it ended, the seconds to wait before the next try, or None to give up.
Decide = Callable[[BaseException, int], float | None]


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

    def wait_before_retry(self, exc: BaseException, attempt: int) -> float | None:
        """The default decision: the failure's `retry_after`, else backoff, until the attempts run out."""
        if attempt >= self.attempts:
            return None
        return getattr(exc, "retry_after", None) or self.delay(attempt)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        what: str,
        retry_on: tuple[type[BaseException], ...],
        decide: Decide | None = None,
    ) -> T:
        """Await `call()`, retrying the `retry_on` failures as `decide` says; the last one propagates.

        With the default decision the final failure is logged here; a caller with its own `decide` reports it.
        """
        report = decide is None
        decide = decide or self.wait_before_retry
        attempt = 0
        while True:
            attempt += 1
            try:
                return await call()
            except retry_on as exc:
                wait = decide(exc, attempt)
                if wait is None:
                    if report and attempt > 1:
                        logger.warning("%s failed after %d attempts: %s", what, attempt, _brief(exc))
                    raise
                logger.info("%s failed (%s); retry %d in %.1fs", what, _brief(exc), attempt, wait)
                await self.sleep(wait)


def _brief(exc: BaseException) -> str:
    """The first line of an exception's text, capped, for one-line logs."""
    text = str(exc).strip().splitlines()
    return (text[0][:200] if text else "") or type(exc).__name__
