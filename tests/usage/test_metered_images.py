"""Metered pictures: one ledger row per picture with its cost, charged to the turn's sender, budgets first."""

from pathlib import Path

import pytest

from bot.bus import ChatRef, Trust
from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded, ProviderError
from bot.llm.images import GeneratedImage
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.metered_images import MeteredImages


class Painter:
    model = "openai/gpt-image-1"

    def __init__(self, *answers: GeneratedImage | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def generate(self, prompt: str) -> GeneratedImage:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_each_picture_is_a_row_with_its_cost_charged_to_the_turns_sender(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    painter = Painter(GeneratedImage(b"png", "image/png", 0.011), ProviderError("no picture"))
    images = MeteredImages(painter, ledger, clock=lambda: 1000.0)
    with charged_to(Charge("chat", ChatRef("telegram", "1"), "alice", Trust.ADMIN)):
        assert (await images.generate("a duck")).data == b"png"
        with pytest.raises(ProviderError):
            await images.generate("a goose")
    rows = [(c.purpose, c.sender, c.model, c.cost_usd, c.outcome) for c in ledger.calls()]
    assert rows == [
        ("image", "alice", "openai/gpt-image-1", 0.011, "ok"),
        ("image", "alice", "openai/gpt-image-1", None, "ProviderError"),
    ]


async def test_a_used_up_budget_draws_nothing(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    guard = BudgetGuard(BudgetsConfig(admin=Limit(daily_usd=0)), ledger, "UTC")
    painter = Painter(GeneratedImage(b"never", "image/png"))
    with charged_to(Charge("chat", ChatRef("telegram", "9"), "telegram:9", Trust.ADMIN)), pytest.raises(BudgetExceeded):
        await MeteredImages(painter, ledger, guard).generate("a duck")
    assert painter.calls == 0 and ledger.calls() == []
