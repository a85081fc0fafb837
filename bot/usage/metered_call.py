"""One metered model call that is not a chat: budget checked first, one ledger row written whatever happens."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Purpose, current_charge
from bot.usage.ledger import CallRecord, Ledger

T = TypeVar("T")


class MeteredCalls:
    """Runs calls such as transcriptions and pictures under the turn's charge, each written as one ledger row."""

    def __init__(
        self, ledger: Ledger, guard: BudgetGuard | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self._ledger = ledger
        self._guard = guard
        self._clock = clock

    async def run(
        self,
        purpose: Purpose,
        model: str,
        call: Callable[[], Awaitable[T]],
        cost_of: Callable[[T], float | None],
        tokens_of: Callable[[T], int] | None = None,
    ) -> T:
        """Await `call`; BudgetExceeded before it when the sender's budget is used up; its outcome is recorded.

        `tokens_of` reads the input tokens the provider counted, where it counts them (embeddings).
        """
        charge = replace(current_charge(), purpose=purpose)
        if self._guard is not None:
            self._guard.check(charge)
        started, outcome, cost, tokens = time.perf_counter(), "ok", None, 0
        try:
            result = await call()
            cost = cost_of(result)
            tokens = tokens_of(result) if tokens_of is not None else 0
            return result
        except BaseException as exc:
            outcome = type(exc).__name__
            raise
        finally:
            self._ledger.record(
                CallRecord(
                    ts=self._clock(),
                    session_key=charge.session_key,
                    sender=charge.sender,
                    purpose=purpose,
                    model=model,
                    prompt_tokens=tokens,
                    completion_tokens=0,
                    cached_tokens=0,
                    cost_usd=cost,
                    estimated=tokens_of is None,
                    latency=time.perf_counter() - started,
                    outcome=outcome,
                )
            )
