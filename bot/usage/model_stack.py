"""The provider each model setting gets: every model metered, fallbacks behind the primary; and the provider a
reload of `llm` swaps."""

from __future__ import annotations

from collections.abc import Callable

from bot.config.schema import LLMConfig
from bot.llm.fallbacks import FallbackProvider
from bot.llm.prices import PriceSource, price_table
from bot.llm.types import Provider
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.meter import MeteredProvider

ProviderFactory = Callable[[LLMConfig], Provider]


class ModelStack:
    """Builds metered providers with `llm.fallbacks` behind them; `made` holds the unmetered ones it built."""

    def __init__(
        self, make: ProviderFactory, ledger: Ledger, guard: BudgetGuard, prices: PriceSource = price_table
    ) -> None:
        self._make = make
        self._ledger = ledger
        self._guard = guard
        self._prices = prices
        self.made: list[Provider] = []

    def _build(self, llm: LLMConfig) -> Provider:
        provider = self._make(llm)
        self.made.append(provider)
        return MeteredProvider(provider, self._ledger, self._guard, self._prices)

    def provider(self, llm: LLMConfig) -> Provider:
        """`llm.model` first, then each fallback model with the same provider settings; each call one ledger row."""
        models = [llm, *(llm.model_copy(update={"model": name}) for name in llm.fallbacks)]
        metered = [self._build(m) for m in models]
        return metered[0] if len(metered) == 1 else FallbackProvider(metered)


class ProviderPool:
    """One unmetered provider per distinct model setting, shared by every agent: one connection pool per model."""

    def __init__(self, make: ProviderFactory) -> None:
        self._make = make
        self.made: list[tuple[LLMConfig, Provider]] = []

    def __call__(self, llm: LLMConfig) -> Provider:
        """The provider for `llm`, made on its first use."""
        for known, provider in self.made:
            if known == llm:
                return provider
        provider = self._make(llm)
        self.made.append((llm, provider))
        return provider


class SwappableProvider:
    """Answers with the provider it holds now; `swap` takes effect from the next call.

    `chat` is the held provider's own method, not a forwarding one: a call pays for no extra frame.
    """

    def __init__(self, provider: Provider) -> None:
        self.swap(provider)

    def swap(self, provider: Provider) -> None:
        """Use `provider` from the next call on (calls under way finish on the old one)."""
        self._provider = provider
        self.model = provider.model
        self.chat = provider.chat
