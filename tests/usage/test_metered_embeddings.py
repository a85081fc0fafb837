"""Metered embeddings: one ledger row per call with the tokens the provider counted, budgets first."""

from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.bus import ChatRef, Trust
from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded, ProviderError
from bot.llm.embeddings import Embedded
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.metered_embeddings import MeteredEmbeddings


class Embedder:
    model = "openai/text-embedding-3-small"

    def __init__(self, *answers: Embedded | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def embed(self, texts: Sequence[str]) -> Embedded:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_each_call_is_a_row_with_its_tokens_charged_to_who_it_serves(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    inner = Embedder(Embedded([[1.0]], 12, 0.0001), Embedded([[1.0]], 3, None), ProviderError("down"))
    embeddings = MeteredEmbeddings(inner, ledger, clock=lambda: 1000.0)
    with charged_to(Charge("chat", ChatRef("telegram", "1"), "telegram:5", Trust.USER)):
        await embeddings.embed(["a question"])
    with charged_to(Charge("embedding")):
        await embeddings.embed(["a passage"])
        with pytest.raises(ProviderError):
            await embeddings.embed(["another"])
    rows = [(c.purpose, c.sender, c.prompt_tokens, c.cost_usd, c.estimated, c.outcome) for c in ledger.calls()]
    assert rows == [
        ("embedding", "telegram:5", 12, 0.0001, False, "ok"),
        ("embedding", None, 3, None, False, "ok"),
        ("embedding", None, 0, None, False, "ProviderError"),
    ]
    assert ledger.totals(0, background=True).tokens == 3


async def test_a_used_up_background_budget_makes_no_request(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    guard = BudgetGuard(BudgetsConfig(background=Limit(daily_tokens=0)), ledger, "UTC")
    inner = Embedder(Embedded([[1.0]], 1, None))
    with charged_to(Charge("embedding")), pytest.raises(BudgetExceeded):
        await MeteredEmbeddings(inner, ledger, guard).embed(["a passage"])
    assert inner.calls == 0 and ledger.calls() == []
