"""Metered text to speech: each spoken reply checked against the budget first and written as one ledger row."""

from __future__ import annotations

import time
from collections.abc import Callable

from bot.llm.speech import Speech, TextToSpeech
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import Ledger
from bot.usage.metered_call import MeteredCalls


class MeteredVoice:
    """Wraps a speech model: each call is a row of purpose `speech`, charged like the turn it serves."""

    def __init__(
        self,
        voice: TextToSpeech,
        ledger: Ledger,
        guard: BudgetGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = voice.model
        self._voice = voice
        self._calls = MeteredCalls(ledger, guard, clock)

    async def speak(self, text: str) -> Speech:
        """Speak like the wrapped model; BudgetExceeded before any request when that sender's budget is used up."""
        return await self._calls.run("speech", self.model, lambda: self._voice.speak(text), lambda speech: speech.cost)
