"""run_python's seconds: each run a ledger row, and a role's daily seconds refused once used, until midnight."""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.bus import ChatRef, Trust
from bot.errors import BudgetExceeded
from bot.usage.charge import Charge, charged_to
from bot.usage.ledger import UsageLedger
from bot.usage.python_time import PythonTime

NOON = datetime(2026, 11, 28, 12, tzinfo=UTC).timestamp()
ANN = Charge(chat=ChatRef("telegram", "5"), sender="telegram:5", role=Trust.USER)
BO = Charge(chat=ChatRef("telegram", "6"), sender="telegram:6", role=Trust.USER)


def test_a_users_seconds_run_out_for_the_day_and_come_back_the_next(tmp_path: Path) -> None:
    now = [NOON]
    ledger = UsageLedger(tmp_path / "usage.db")
    meter = PythonTime(ledger, {Trust.USER: 60.0, Trust.OWNER: None}, "UTC", clock=lambda: now[0])
    with charged_to(ANN):
        meter.check()
        meter.record(45.0)
        meter.check()
        meter.record(20.0, "timeout")
        with pytest.raises(BudgetExceeded, match=r"today's run_python time \(60 s\) is used up; it resets 2026-11-29"):
            meter.check()
    with charged_to(BO):
        meter.check()  # seconds are counted per sender
    now[0] += 86400
    with charged_to(ANN):
        meter.check()
    rows = ledger.calls()
    assert [(r.purpose, r.model, r.latency, r.outcome) for r in rows] == [
        ("python", "sandbox", 45.0, "ok"),
        ("python", "sandbox", 20.0, "timeout"),
    ]


def test_an_owner_without_a_limit_is_never_refused(tmp_path: Path) -> None:
    meter = PythonTime(UsageLedger(tmp_path / "usage.db"), {Trust.OWNER: None}, "UTC", clock=lambda: NOON)
    with charged_to(Charge(sender="telegram:42", role=Trust.OWNER)):
        meter.record(10_000.0)
        meter.check()
