"""Metered speech to text: each transcription checked against the budget first and written as one ledger row."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from bot.llm.transcription import SpeechToText, Transcript
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.metered_call import MeteredCalls


class MeteredSpeech:
    """Wraps a speech model: each call is a row of purpose `transcription`, charged like the turn it serves."""

    def __init__(
        self,
        speech: SpeechToText,
        ledger: Ledger,
        guard: BudgetGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = speech.model
        self._speech = speech
        self._calls = MeteredCalls(ledger, guard, clock)

    async def transcribe(self, path: Path) -> Transcript:
        """Transcribe like the wrapped model; BudgetExceeded before any request when that sender's budget is used up."""
        return await self._calls.run(
            "transcription", self.model, lambda: self._speech.transcribe(path), lambda transcript: transcript.cost
        )
