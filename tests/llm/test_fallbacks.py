from typing import Any

import pytest

from bot.errors import BudgetExceeded, ContextOverflow, ProviderUnavailable, StreamBroken
from bot.llm.fallbacks import FallbackProvider
from bot.llm.types import LLMResponse


class Model:
    def __init__(self, model: str, outcome: LLMResponse | Exception) -> None:
        self.model = model
        self.outcome = outcome
        self.calls = 0

    async def chat(
        self, messages: list[dict[str, Any]], tools: Any = None, on_delta: Any = None, max_tokens: Any = None
    ) -> LLMResponse:
        self.calls += 1
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


async def test_the_next_model_answers_after_unavailability_or_a_context_refusal() -> None:
    for failure in (ProviderUnavailable("503"), ContextOverflow("too long")):
        backup = Model("b", LLMResponse("from b"))
        provider = FallbackProvider([Model("a", failure), backup])
        assert provider.model == "a"
        assert (await provider.chat([])).content == "from b" and backup.calls == 1


async def test_a_budget_refusal_or_a_broken_stream_is_not_retried_on_another_model() -> None:
    for failure in (BudgetExceeded("used up"), StreamBroken("cut")):
        backup = Model("b", LLMResponse("from b"))
        with pytest.raises(type(failure)):
            await FallbackProvider([Model("a", failure), backup]).chat([])
        assert backup.calls == 0
