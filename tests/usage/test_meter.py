"""The metered provider: one ledger row per call, estimates flagged, cached tokens priced, budgets first."""

from pathlib import Path
from typing import Any

import pytest

from bot.bus import ChatRef, Trust
from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded, ProviderUnavailable
from bot.llm.prices import call_cost, records
from bot.llm.provider import priced
from bot.llm.types import LLMResponse, Usage
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.meter import MeteredProvider

PRICES = records(
    {"gpt-x": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "cache_read_input_token_cost": 1e-7}}
)


class Stub:
    model = "openai/gpt-x"

    def __init__(self, *answers: LLMResponse | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def chat(
        self, messages: list[dict[str, Any]], tools: Any = None, on_delta: Any = None, max_tokens: Any = None
    ) -> LLMResponse:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def metered(tmp_path: Path, stub: Stub, guard: BudgetGuard | None = None) -> tuple[MeteredProvider, UsageLedger]:
    ledger = UsageLedger(tmp_path / "usage.db")
    return MeteredProvider(stub, ledger, guard, prices=lambda: PRICES), ledger


async def test_cached_tokens_are_recorded_and_priced_at_the_cache_rate(tmp_path: Path) -> None:
    provider, ledger = metered(tmp_path, Stub(LLMResponse("hi", usage=Usage(1000, 10, 600))))
    with charged_to(Charge("cron", ChatRef("telegram", "1"), "telegram:5", Trust.USER)):
        await provider.chat([{"role": "user", "content": "hi"}])
    (call,) = ledger.calls()
    assert (call.purpose, call.sender, call.cached_tokens, call.estimated) == ("cron", "telegram:5", 600, False)
    assert call.cost_usd == pytest.approx(400e-6 + 600e-7 + 20e-6)


async def test_a_call_without_reported_usage_is_estimated_and_flagged(tmp_path: Path) -> None:
    provider, ledger = metered(tmp_path, Stub(LLMResponse("x" * 300)))
    await provider.chat([{"role": "user", "content": "y" * 3000}])
    (call,) = ledger.calls()
    assert call.estimated and call.prompt_tokens >= 1000 and call.completion_tokens == 100


async def test_failed_calls_are_rows_and_a_used_up_budget_makes_no_call(tmp_path: Path) -> None:
    stub = Stub(ProviderUnavailable("down"), LLMResponse("ok", usage=Usage(60, 50)))
    ledger = UsageLedger(tmp_path / "usage.db")
    guard = BudgetGuard(BudgetsConfig(guest=Limit(daily_tokens=100)), ledger, "UTC")
    provider = MeteredProvider(stub, ledger, guard, prices=lambda: PRICES)
    with charged_to(Charge("chat", ChatRef("telegram", "9"), "telegram:9", Trust.GUEST)):
        with pytest.raises(ProviderUnavailable):
            await provider.chat([])
        await provider.chat([])
        with pytest.raises(BudgetExceeded, match="daily token budget"):
            await provider.chat([])
    assert stub.calls == 2
    assert [(c.outcome, c.cost_usd is None) for c in ledger.calls()] == [("ProviderUnavailable", True), ("ok", False)]


async def test_the_ledger_and_the_provider_price_a_call_with_cached_tokens_alike(tmp_path: Path) -> None:
    model = "openai/gpt-4o-mini"
    response = priced(LLMResponse("hi", usage=Usage(1000, 100, 600)), model)
    stub = Stub(response)
    stub.model = model
    ledger = UsageLedger(tmp_path / "usage.db")
    await MeteredProvider(stub, ledger).chat([{"role": "user", "content": "hi"}])
    (call,) = ledger.calls()
    assert call.cost_usd == pytest.approx(response.usage.cost)
    assert 0 < response.usage.cost < (call_cost(model, 1000, 100, 0) or 0)


async def test_guests_get_5000_tokens_a_month_out_of_the_box_and_users_are_unlimited(tmp_path: Path) -> None:
    stub = Stub(*(LLMResponse("ok", usage=Usage(2000, 500)) for _ in range(3)))
    ledger = UsageLedger(tmp_path / "usage.db")
    provider = MeteredProvider(stub, ledger, BudgetGuard(BudgetsConfig(), ledger, "UTC"), prices=lambda: PRICES)
    with charged_to(Charge("chat", ChatRef("telegram", "9"), "telegram:9", Trust.GUEST)):
        await provider.chat([])
        await provider.chat([])
        with pytest.raises(BudgetExceeded, match="monthly token budget"):
            await provider.chat([])
    with charged_to(Charge("chat", ChatRef("telegram", "8"), "telegram:8", Trust.USER)):
        await provider.chat([])
    assert stub.calls == 3
