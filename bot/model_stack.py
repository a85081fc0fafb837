"""The provider each model setting gets: every model metered, fallbacks behind the primary."""

from __future__ import annotations

from collections.abc import Callable

from bot.config import LLMConfig
from bot.fallback import FallbackProvider
from bot.llm import Provider
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import UsageLedger
from bot.usage.meter import MeteredProvider
from bot.usage.pricing import PriceMap, litellm_prices

ProviderFactory = Callable[[LLMConfig], Provider]


class ModelStack:
    """Builds metered providers with `llm.fallbacks` behind them, one per distinct LLM setting."""

    def __init__(
        self, make: ProviderFactory, ledger: UsageLedger, guard: BudgetGuard, prices: PriceMap = litellm_prices
    ) -> None:
        self._make = make
        self._ledger = ledger
        self._guard = guard
        self._prices = prices

    def provider(self, llm: LLMConfig) -> Provider:
        """`llm.model` first, then each fallback model with the same provider settings; each call one ledger row."""
        models = [llm, *(llm.model_copy(update={"model": name}) for name in llm.fallbacks)]
        metered = [MeteredProvider(self._make(m), self._ledger, self._guard, self._prices) for m in models]
        return metered[0] if len(metered) == 1 else FallbackProvider(metered)
