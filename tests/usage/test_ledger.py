"""The ledger, prices, periods, budgets and reports as pure parts."""

import json
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.bus import ChatRef, Trust
from bot.cluster.redis import RedisState
from bot.config.schema import BudgetsConfig, Limit
from bot.errors import BudgetExceeded
from bot.llm.prices import call_cost, records
from bot.usage.budgets import BudgetGuard
from bot.usage.charge import Charge
from bot.usage.ledger import CallRecord, Ledger, UsageLedger
from bot.usage.periods import next_day, next_month
from bot.usage.report import as_chart, as_json, as_table, since_timestamp

PRICES = records(
    {"gpt-x": {"input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6, "cache_read_input_token_cost": 1e-7}}
)
BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 3, 31, 23, 30, tzinfo=BERLIN).timestamp()


@pytest.fixture(params=["sqlite", "redis"])
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Ledger:
    """The SQLite ledger, or the Redis one with its day counters in the budgets' timezone."""
    if request.param == "sqlite":
        return UsageLedger(tmp_path / "usage.db")
    from bot.usage.redis_ledger import RedisUsageLedger

    return RedisUsageLedger(RedisState(request.getfixturevalue("redis_url"), "test"), "Europe/Berlin")


def call(ts: float, sender: str | None, tokens: int, cost: float | None, purpose: str = "chat") -> CallRecord:
    return CallRecord(ts, "telegram:1", sender, purpose, "openai/gpt-x", tokens, 10, 0, cost, False, 0.1, "ok")


def test_cost_uses_the_price_map_with_cached_tokens_and_none_for_unknown_models() -> None:
    assert call_cost("openai/gpt-x", 1000, 100, 400, PRICES) == pytest.approx(600e-6 + 400e-7 + 400e-6)
    assert call_cost("openai/unknown", 1000, 100, 0, PRICES) is None


def test_totals_and_groups_keep_unknown_cost_apart_from_zero(ledger: Ledger) -> None:
    ledger.record(call(100, "telegram:1", 50, None))
    ledger.record(call(200, "telegram:1", 30, 0.5))
    ledger.record(call(300, "telegram:2", 20, None))
    ledger.record(call(400, None, 5, None, "heartbeat"))
    assert ledger.totals(0, sender="telegram:1").cost_usd == 0.5
    assert ledger.totals(0, sender="telegram:2").cost_usd is None
    assert ledger.totals(150, sender="telegram:1").tokens == 40
    assert ledger.totals(0, background=True).calls == 1
    groups = ledger.grouped("sender", 0)
    summary = [(g.key, g.calls, g.tokens_in) for g in groups]
    assert summary == [("telegram:1", 2, 80), ("telegram:2", 1, 20), (None, 1, 5)]
    rows = json.loads(as_json(groups))
    assert rows[0] == {"key": "telegram:1", "calls": 2, "tokens_in": 80, "tokens_out": 20, "cost_usd": 0.5}
    assert rows[1]["cost_usd"] is None
    table = as_table(groups, "sender")
    assert "(background)" in table and table.splitlines()[-1].split()[0] == "total" and "$0.5000" in table
    assert ledger.calls(250)[0].sender == "telegram:2"


def test_periods_reset_at_local_midnight_and_on_the_first() -> None:
    assert next_day(NOW, BERLIN) == datetime(2026, 4, 1, tzinfo=BERLIN)
    assert next_month(NOW, BERLIN) == datetime(2026, 4, 1, tzinfo=BERLIN)
    assert since_timestamp(None, NOW, BERLIN) == datetime(2026, 3, 1, tzinfo=BERLIN).timestamp()
    assert since_timestamp("7d", NOW, BERLIN) == NOW - 7 * 86400
    assert since_timestamp("2026-03-02", NOW, BERLIN) == datetime(2026, 3, 2, tzinfo=BERLIN).timestamp()


def test_a_sender_override_replaces_the_role_limit_and_background_has_its_own_cap(ledger: Ledger) -> None:
    notes: list[str] = []
    config = BudgetsConfig(
        user=Limit(monthly_tokens=100), senders={"telegram:42": Limit(daily_usd=0.5)}, background=Limit(daily_usd=1.0)
    )
    guard = BudgetGuard(config, ledger, "Europe/Berlin", clock=lambda: NOW, notify_owner=notes.append)
    user = Charge("chat", ChatRef("telegram", "1"), "telegram:1", Trust.USER)
    ledger.record(call(NOW - 60, "telegram:1", 85, None))  # 95 with the completion
    guard.check(user)
    ledger.record(call(NOW - 30, "telegram:1", 5, None))
    with pytest.raises(BudgetExceeded, match="monthly token budget.*resets 2026-04-01 00:00"):
        guard.check(user)
    vip = Charge("chat", ChatRef("telegram", "42"), "telegram:42", Trust.USER)
    ledger.record(call(NOW - 60, "telegram:42", 1000, 0.2))
    guard.check(vip)
    assert guard.left(vip) == "$0.30 today"
    background = Charge("heartbeat", ChatRef("heartbeat", "main"))
    ledger.record(call(NOW - 60, None, 10, 1.0, "consolidation"))
    for _ in range(2):
        with pytest.raises(BudgetExceeded):
            guard.check(background)
    assert len(notes) == 1 and "paused" in notes[0]
    assert guard.left(Charge("chat", ChatRef("telegram", "x"), "telegram:7", Trust.OWNER)) == "unlimited"


def test_chart_draws_one_bar_per_day() -> None:
    chart = as_chart([(20_000, 100), (20_001, 50)]).splitlines()
    assert chart[0].startswith("2024-10-04") and chart[0].count("#") == 40 and chart[1].count("#") == 20
