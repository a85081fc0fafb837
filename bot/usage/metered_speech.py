"""Metered speech to text: each transcription checked against the budget first and written as one ledger row."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from bot.llm.transcription import SpeechToText, Transcript
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import current_charge
from bot.usage.ledger import CallRecord, Ledger


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
        self._ledger = ledger
        self._guard = guard
        self._clock = clock

    async def transcribe(self, path: Path) -> Transcript:
        """Transcribe like the wrapped model; BudgetExceeded before any request when that sender's budget is used up."""
        charge = replace(current_charge(), purpose="transcription")
        if self._guard is not None:
            self._guard.check(charge)
        started, outcome, cost = time.perf_counter(), "ok", None
        try:
            transcript = await self._speech.transcribe(path)
            cost = transcript.cost
            return transcript
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            self._ledger.record(
                CallRecord(
                    ts=self._clock(),
                    session_key=charge.session_key,
                    sender=charge.sender,
                    purpose="transcription",
                    model=self.model,
                    prompt_tokens=0,
                    completion_tokens=0,
                    cached_tokens=0,
                    cost_usd=cost,
                    estimated=True,
                    latency=time.perf_counter() - started,
                    outcome=outcome,
                )
            )
