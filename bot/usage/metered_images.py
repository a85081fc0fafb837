"""Metered image generation: each picture checked against the budget first and written as one ledger row."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.llm.images import GeneratedImage, ImageMaker
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.metered_call import MeteredCalls


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
        self._calls = MeteredCalls(ledger, guard, clock)

    async def generate(self, prompt: str) -> GeneratedImage:
        """Draw like the wrapped model; BudgetExceeded before any request when the sender's budget is used up."""
        return await self._calls.run(
            "image", self.model, lambda: self._images.generate(prompt), lambda image: image.cost
        )
