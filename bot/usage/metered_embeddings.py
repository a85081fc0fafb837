"""Metered embeddings: each call checked against the budget first and written as one ledger row with its tokens."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from bot.llm.embeddings import Embedded, Embedder
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.metered_call import MeteredCalls


class MeteredEmbeddings:
    """Wraps an embedding model: each call is a row of purpose `embedding`, charged like the work it serves."""

    def __init__(
        self,
        embedder: Embedder,
        ledger: Ledger,
        guard: BudgetGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = embedder.model
        self._embedder = embedder
        self._calls = MeteredCalls(ledger, guard, clock)

    async def embed(self, texts: Sequence[str]) -> Embedded:
        """Embed like the wrapped model; BudgetExceeded before any request when the budget is used up."""
        return await self._calls.run(
            "embedding",
            self.model,
            lambda: self._embedder.embed(texts),
            lambda embedded: embedded.cost,
            lambda embedded: embedded.tokens,
        )
