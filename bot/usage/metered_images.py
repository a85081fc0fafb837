"""Metered image generation: each picture checked against the budget first and written as one ledger row."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from bot.llm.images import GeneratedImage, ImageMaker
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import current_charge
from bot.usage.ledger import CallRecord, Ledger


class MeteredImages:
    """Wraps an image model: each call is a row of purpose `image`, charged like the turn it serves."""

    def __init__(
        self,
        images: ImageMaker,
        ledger: Ledger,
        guard: BudgetGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = images.model
        self._images = images
        self._ledger = ledger
        self._guard = guard
        self._clock = clock

    async def generate(self, prompt: str) -> GeneratedImage:
        """Draw like the wrapped model; BudgetExceeded before any request when the sender's budget is used up."""
        charge = replace(current_charge(), purpose="image")
        if self._guard is not None:
            self._guard.check(charge)
        started, outcome, cost = time.perf_counter(), "ok", None
        try:
            image = await self._images.generate(prompt)
            cost = image.cost
            return image
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            self._ledger.record(
                CallRecord(
                    ts=self._clock(),
                    session_key=charge.session_key,
                    sender=charge.sender,
                    purpose="image",
                    model=self.model,
                    prompt_tokens=0,
                    completion_tokens=0,
                    cached_tokens=0,
                    cost_usd=cost,
                    estimated=True,
                    latency=time.perf_counter() - started,
                    outcome=outcome,
                )
            )
