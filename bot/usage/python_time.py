"""run_python's seconds: one ledger row per run (purpose `python`, seconds as latency), a daily limit per role."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from zoneinfo import ZoneInfo

from bot.bus import Trust
from bot.errors import BudgetExceeded
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import current_charge
from bot.usage.ledger import CallRecord, Ledger
from bot.usage.periods import day_start, next_day

MODEL = "sandbox"


class PythonTime:
    """Checks before a run that the sender's role has seconds left today (and budget at all); records each run."""

    def __init__(
        self,
        ledger: Ledger,
        daily_seconds: Mapping[Trust, float | None],
        timezone: str,
        guard: BudgetGuard | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ledger = ledger
        self._daily = dict(daily_seconds)
        self._zone = ZoneInfo(timezone)
        self._guard = guard
        self._clock = clock

    def check(self) -> None:
        """BudgetExceeded when the sender's budget is used up, or their role's run_python seconds for today."""
        charge = replace(current_charge(), purpose="python")
        if self._guard is not None:
            self._guard.check(charge)
        limit = self._daily.get(charge.role or Trust.GUEST)
        if limit is None:
            return
        if limit <= 0:
            raise BudgetExceeded("run_python is not available to this sender's role.")
        now = self._clock()
        since = day_start(now, self._zone).timestamp()
        used = sum(
            call.latency
            for call in self._ledger.calls(since)
            if call.purpose == "python" and call.sender == charge.sender
        )
        if used >= limit:
            resets = next_day(now, self._zone)
            raise BudgetExceeded(
                f"today's run_python time ({limit:g} s) is used up; "
                f"it resets {resets:%Y-%m-%d %H:%M} ({self._zone.key})."
            )

    def record(self, seconds: float, outcome: str = "ok") -> None:
        """One ledger row for a run of `seconds`, charged like the turn it served."""
        charge = current_charge()
        self._ledger.record(
            CallRecord(
                ts=self._clock(),
                session_key=charge.session_key,
                sender=charge.sender,
                purpose="python",
                model=MODEL,
                prompt_tokens=0,
                completion_tokens=0,
                cached_tokens=0,
                cost_usd=None,
                estimated=True,
                latency=seconds,
                outcome=outcome,
            )
        )
