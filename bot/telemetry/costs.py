"""The USD cost of one model call as the ledger counts it, for telemetry that sees only the event."""

from __future__ import annotations

from bot.events import LLMCalled
from bot.llm.prices import PriceTable, call_cost, price_table


class CallCosts:
    """Prices model calls from the bundled price table (loaded at the first call)."""

    def __init__(self) -> None:
        self._table: PriceTable | None = None

    def of(self, call: LLMCalled) -> float | None:
        """USD for `call`, or None when the model has no price."""
        if self._table is None:
            self._table = price_table()
        return call_cost(call.model, call.prompt_tokens, call.completion_tokens, call.cached_tokens, self._table)
