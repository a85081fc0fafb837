"""Fallback models: when one is unavailable after its retries, or refuses for context size, the next answers."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from bot.errors import ContextOverflow, ProviderUnavailable, StreamBroken
from bot.llm.types import DeltaHandler, LLMResponse, Provider

logger = logging.getLogger(__name__)


class FallbackProvider:
    """Tries each provider in order; the first is the primary, and its model is the one reported."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        if not providers:
            raise ValueError("FallbackProvider needs at least one provider")
        self.model = providers[0].model
        self._providers = list(providers)

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """The first answer; the last failure when every model failed."""
        *others, last = self._providers
        for provider in others:
            try:
                return await provider.chat(messages, tools, on_delta, max_tokens=max_tokens)
            except StreamBroken:
                raise  # part of the reply is already on screen: another model would repeat it
            except (ProviderUnavailable, ContextOverflow) as exc:
                logger.warning("model %s failed (%s); falling back", provider.model, type(exc).__name__)
        return await last.chat(messages, tools, on_delta, max_tokens=max_tokens)
