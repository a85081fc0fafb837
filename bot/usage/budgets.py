"""Budgets: checked before every model call; a used-up period refuses the call and says when it resets."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded
from bot.usage.charge import Charge
from bot.usage.ledger import Ledger, Totals
from bot.usage.periods import day_start, month_start, next_day, next_month

logger = logging.getLogger(__name__)

Notify = Callable[[str], None]


class BudgetGuard:
    """Knows each sender's limit (override, else role) and the background cap; raises BudgetExceeded."""

    def __init__(
        self,
        config: BudgetsConfig,
        ledger: Ledger,
        timezone: str,
        clock: Callable[[], float] = time.time,
        notify_owner: Notify | None = None,
    ) -> None:
        self._config = config
        self._ledger = ledger
        self._zone = ZoneInfo(timezone)
        self._clock = clock
        self._notify_owner = notify_owner
        self._paused_until: float | None = None

    def configure(self, config: BudgetsConfig) -> None:
        """Check against these limits from the next call on (a config reload)."""
        self._config = config

    def limit_for(self, charge: Charge) -> Limit | None:
        """The limit that applies to a charge: background cap, sender override, or the role's."""
        if charge.is_background:
            return self._config.background
        if charge.sender is None:
            return None
        if charge.sender in self._config.senders:
            return self._config.senders[charge.sender]
        return getattr(self._config, charge.role.value) if charge.role is not None else None

    def check(self, charge: Charge) -> None:
        """Raise BudgetExceeded when the charge's period use has reached its limit."""
        limit = self.limit_for(charge)
        if limit is None:
            return
        reached = self.reached(charge, limit)
        if reached is None:
            return
        what, resets = reached
        if charge.is_background:
            self._pause(resets)
            raise BudgetExceeded(f"background work paused: {what} reached")
        raise BudgetExceeded(
            f"You have used your {what} with me. It resets {resets:%Y-%m-%d %H:%M} ({self._zone.key}); "
            "until then I can't answer."
        )

    def reached(self, charge: Charge, limit: Limit) -> tuple[str, datetime] | None:
        """The first limit reached (its description and reset time), or None."""
        now = self._clock()
        day = self._totals(charge, day_start(now, self._zone).timestamp())
        month = self._totals(charge, month_start(now, self._zone).timestamp())
        checks = (
            (limit.daily_tokens, day.tokens, "daily token budget", next_day),
            (limit.daily_usd, day.cost_usd or 0.0, "daily spending budget", next_day),
            (limit.monthly_tokens, month.tokens, "monthly token budget", next_month),
            (limit.monthly_usd, month.cost_usd or 0.0, "monthly spending budget", next_month),
        )
        for cap, used, what, reset in checks:
            if cap is not None and used >= cap:
                return what, reset(now, self._zone)
        return None

    def left(self, charge: Charge) -> str:
        """What the charge may still use this period, in words for /status."""
        limit = self.limit_for(charge)
        if limit is None:
            return "unlimited"
        now = self._clock()
        day = self._totals(charge, day_start(now, self._zone).timestamp())
        month = self._totals(charge, month_start(now, self._zone).timestamp())
        parts = []
        if limit.daily_tokens is not None:
            parts.append(f"{max(0, limit.daily_tokens - day.tokens):,} tokens today")
        if limit.monthly_tokens is not None:
            parts.append(f"{max(0, limit.monthly_tokens - month.tokens):,} tokens this month")
        if limit.daily_usd is not None:
            parts.append(f"${max(0.0, limit.daily_usd - (day.cost_usd or 0.0)):.2f} today")
        if limit.monthly_usd is not None:
            parts.append(f"${max(0.0, limit.monthly_usd - (month.cost_usd or 0.0)):.2f} this month")
        return ", ".join(parts) or "unlimited"

    def _totals(self, charge: Charge, since: float) -> Totals:
        if charge.is_background:
            return self._ledger.totals(since, background=True)
        return self._ledger.totals(since, sender=charge.sender)

    def _pause(self, resets: datetime) -> None:
        """One log line and one owner note per pause."""
        until = resets.timestamp()
        if self._paused_until is not None and self._paused_until >= until:
            return
        self._paused_until = until
        note = (
            "Background work (heartbeat, memory consolidation) is paused: "
            f"its budget is used up until {resets:%Y-%m-%d %H:%M}."
        )
        logger.warning("budgets: %s", note)
        if self._notify_owner:
            self._notify_owner(note)
