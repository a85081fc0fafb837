"""/usage and /pair in chat: a sender's spend, and admins letting senders in or out."""

from __future__ import annotations

import time
from collections.abc import Callable
from zoneinfo import ZoneInfo

from bot.access.pairing import Pairing
from bot.bus import InboundMessage, Trust
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import charge_for, payer_of
from bot.usage.ledger import Ledger, Totals
from bot.usage.periods import day_start, month_start

PAIR_USAGE = "Use /pair approve CODE or /pair revoke ID."


def describe(totals: Totals) -> str:
    """`1,234 tokens, $0.0012` (or `cost unknown` when no call had a price)."""
    cost = f"${totals.cost_usd:.4f}" if totals.cost_usd is not None else "cost unknown"
    return f"{totals.tokens:,} tokens, {cost}" if totals.calls else "nothing"


class AccountCommands:
    """Answers /usage and /pair, and says what budget a sender has left."""

    def __init__(
        self,
        ledger: Ledger,
        guard: BudgetGuard,
        pairing: Pairing | None,
        timezone: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ledger = ledger
        self._guard = guard
        self._pairing = pairing
        self._zone = ZoneInfo(timezone)
        self._clock = clock

    def usage(self, message: InboundMessage) -> str:
        """The sender's and the chat's use today and this month; owners also see the totals."""
        now = self._clock()
        periods = (("Today", day_start(now, self._zone)), ("This month", month_start(now, self._zone)))
        sender = payer_of(message)
        chat = message.chat.session_key
        lines = []
        for label, start in periods:
            since = start.timestamp()
            parts = [
                f"you {describe(self._ledger.totals(since, sender=sender))}",
                f"this chat {describe(self._ledger.totals(since, session_key=chat))}",
            ]
            if message.trust is Trust.OWNER:
                parts.append(f"everyone {describe(self._ledger.totals(since))}")
            lines.append(f"{label}: " + "; ".join(parts))
        return "\n".join(lines)

    def budget_left(self, message: InboundMessage) -> str:
        """What the sender may still use, in words."""
        return self._guard.left(charge_for(message))

    def pair(self, message: InboundMessage) -> str:
        """`/pair approve CODE` or `/pair revoke ID` on the chat's own channel (the catalogue admits admins only)."""
        words = message.text.split()
        if len(words) != 3 or words[1].lower() not in ("approve", "revoke") or self._pairing is None:
            return PAIR_USAGE
        channel, action, value = message.chat.channel, words[1].lower(), words[2]
        if action == "approve":
            user = self._pairing.approve(channel, value)
            return f"Approved {channel}:{user}." if user else f"No pending code {value.upper()} on {channel}."
        if self._pairing.revoke(channel, value):
            return f"Revoked {channel}:{value}."
        return f"{channel}:{value} was not paired."
