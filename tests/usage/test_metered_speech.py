"""Metered speech to text: one ledger row per transcription, priced as the provider said, budgets first."""

from pathlib import Path

import pytest

from bot.bus import ChatRef, Trust
from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded
from bot.llm.transcription import Transcript
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.metered_speech import MeteredSpeech


class Speech:
    model = "openai/whisper-1"

    def __init__(self, *answers: Transcript | Exception) -> None:
        self.answers = list(answers)
        self.calls = 0

    async def transcribe(self, path: Path) -> Transcript:
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def test_each_transcription_is_a_row_charged_to_the_turns_sender(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    speech = MeteredSpeech(Speech(Transcript("hello", 0.006), OSError("unreadable")), ledger, clock=lambda: 1000.0)
    with charged_to(Charge("chat", ChatRef("telegram", "1"), "telegram:5", Trust.USER)):
        assert (await speech.transcribe(tmp_path / "a.ogg")).text == "hello"
        with pytest.raises(OSError):
            await speech.transcribe(tmp_path / "b.ogg")
    rows = [(c.purpose, c.sender, c.model, c.cost_usd, c.outcome, c.ts) for c in ledger.calls()]
    assert rows == [
        ("transcription", "telegram:5", "openai/whisper-1", 0.006, "ok", 1000.0),
        ("transcription", "telegram:5", "openai/whisper-1", None, "OSError", 1000.0),
    ]


async def test_a_used_up_budget_makes_no_request(tmp_path: Path) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    guard = BudgetGuard(BudgetsConfig(guest=Limit(daily_tokens=0)), ledger, "UTC")
    inner = Speech(Transcript("never"))
    with charged_to(Charge("chat", ChatRef("telegram", "9"), "telegram:9", Trust.GUEST)), pytest.raises(BudgetExceeded):
        await MeteredSpeech(inner, ledger, guard).transcribe(tmp_path / "a.ogg")
    assert inner.calls == 0 and ledger.calls() == []
