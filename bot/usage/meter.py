"""The metered provider: checks the budget before each call and writes one ledger row after it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from bot.llm.prices import PriceSource, PriceTable, call_cost, price_table
from bot.llm.tokens import CHARS_PER_TOKEN, estimate_tokens, estimate_tool_tokens
from bot.llm.types import DeltaHandler, LLMResponse, Provider, Usage
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import current_charge
from bot.usage.ledger import CallRecord, Ledger

logger = logging.getLogger(__name__)


def estimate_usage(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, response: LLMResponse) -> Usage:
    """A rough count for providers that report none: characters / 3."""
    prompt = sum(estimate_tokens(m) for m in messages) + estimate_tool_tokens(tools)
    answer = len(response.content) + sum(len(c.raw_arguments) + len(c.name) for c in response.tool_calls)
    return Usage(prompt, max(1, answer // CHARS_PER_TOKEN))


class MeteredProvider:
    """Wraps one model's provider: budget check first, then the call, then one ledger row whatever happened."""

    def __init__(
        self,
        provider: Provider,
        ledger: Ledger,
        guard: BudgetGuard | None = None,
        prices: PriceSource = price_table,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.model = provider.model
        self._provider = provider
        self._ledger = ledger
        self._guard = guard
        self._prices = prices
        self._price_map: PriceTable | None = None
        self._clock = clock

    async def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        on_delta: DeltaHandler | None = None,
        max_tokens: int | None = None,
    ) -> LLMResponse:
        """Answer like the wrapped provider; BudgetExceeded before any request when the budget is used up."""
        charge = current_charge()
        if self._guard is not None:
            self._guard.check(charge)
        started = time.perf_counter()
        outcome = "ok"
        usage = Usage()
        estimated = False
        try:
            response = await self._provider.chat(messages, tools, on_delta, max_tokens=max_tokens)
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        except Exception as exc:
            outcome = type(exc).__name__
            raise
        else:
            usage = response.usage
            if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
                usage, estimated = estimate_usage(messages, tools, response), True
            return response
        finally:
            cost = None
            if outcome == "ok":
                cost = call_cost(
                    self.model, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens, self._price_table()
                )
            self._record(
                CallRecord(
                    ts=self._clock(),
                    session_key=charge.session_key,
                    sender=charge.sender,
                    purpose=charge.purpose,
                    model=self.model,
                    prompt_tokens=usage.prompt_tokens,
                    completion_tokens=usage.completion_tokens,
                    cached_tokens=usage.cached_tokens,
                    cost_usd=cost,
                    estimated=estimated,
                    latency=time.perf_counter() - started,
                    outcome=outcome,
                )
            )

    def _price_table(self) -> PriceTable:
        if self._price_map is None:
            self._price_map = self._prices()
        return self._price_map

    def _record(self, call: CallRecord) -> None:
        try:
            self._ledger.record(call)
        except Exception:  # the ledger must never break a turn
            logger.exception("usage ledger: could not record a %s call", call.purpose)
