"""A provider whose model can be replaced while the bot runs: what a reload of `llm` swaps."""

from __future__ import annotations

from typing import Any

from bot.llm.types import DeltaHandler, LLMResponse, Provider


class SwappableProvider:
    """Forwards every call to the provider it holds now; `swap` takes effect from the next call."""

    def __init__(self, provider: Provider) -> None:
        self._provider = provider
        self.model = provider.model

    def swap(self, provider: Provider) -> None:
        """Use `provider` from the next call on (calls under way finish on the old one)."""
        self._provider = provider
        self.model = provider.model

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        return await self._provider.chat(messages, tools, on_delta, max_tokens=max_tokens)
