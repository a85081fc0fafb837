"""The Redis ledger answers exactly as the SQLite one, from its day counters and its records alike."""

import random
from dataclasses import astuple
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.cluster.redis import RedisState
from bot.usage.ledger import GROUPS, CallRecord, Totals, UsageLedger
from bot.usage.periods import day_start, month_start
from bot.usage.redis_ledger import RedisUsageLedger

ZONE = "Asia/Kolkata"  # +05:30 all year: local days are not UTC days, and a fixed offset gives the same days
START = datetime(2026, 2, 20, 13, 0, tzinfo=ZoneInfo(ZONE)).timestamp()


def random_calls(count: int) -> list[CallRecord]:
    rng = random.Random(3)
    calls = []
    for _ in range(count):
        sender = rng.choice(["telegram:1", "slack:U2", None])
        purpose = rng.choice(["heartbeat", "consolidation"]) if sender is None else rng.choice(["chat", "subagent"])
        cost = rng.choice([None, round(rng.random() / 100, 6)])
        calls.append(
            CallRecord(
                START + rng.uniform(0, 40 * 86400),
                rng.choice(["telegram:1", "slack:C1:1700.1", None]),
                sender,
                purpose,
                rng.choice(["openai/a", "openai/b"]),
                rng.randint(1, 900),
                rng.randint(0, 300),
                rng.randint(0, 50),
                cost,
                rng.random() < 0.2,
                0.5,
                "ok",
            )
        )
    return calls


def same(a: Totals, b: Totals) -> bool:
    """Equal, but float sums may differ in the last bits between SQLite and Redis."""
    return all(
        abs(x - y) < 1e-9 if isinstance(x, float) and isinstance(y, float) else x == y
        for x, y in zip(astuple(a), astuple(b), strict=True)
    )


def test_sums_from_day_counters_match_the_sqlite_ledger(tmp_path: Path, redis_url: str) -> None:
    sqlite, redis = UsageLedger(tmp_path / "usage.db"), RedisUsageLedger(RedisState(redis_url, "test"), ZONE)
    for record in random_calls(300):
        sqlite.record(record)
        redis.record(record)
    zone = ZoneInfo(ZONE)
    middle = START + 25 * 86400
    moments = [0.0, START, middle, day_start(middle, zone).timestamp(), month_start(middle, zone).timestamp()]
    filters = [{}, {"sender": "telegram:1"}, {"session_key": "slack:C1:1700.1"}, {"background": True}]
    filters.append({"sender": "telegram:1", "session_key": "telegram:1"})
    for since in moments:
        for where in filters:
            expected, got = sqlite.totals(since, **where), redis.totals(since, **where)
            assert same(expected, got), (since, where, expected, got)
        for by in GROUPS:
            expected_groups = {g.key: g for g in sqlite.grouped(by, since)}
            got_groups = {g.key: g for g in redis.grouped(by, since)}
            assert expected_groups.keys() == got_groups.keys()
            for key, group in expected_groups.items():
                assert same(group, got_groups[key]), (by, key)
        offset = 5.5 * 3600
        assert redis.daily(since, offset) == sqlite.daily(since, offset)
    assert redis.calls(middle) == sorted(sqlite.calls(middle), key=lambda c: c.ts)


def test_a_budget_check_reads_counters_not_records(redis_url: str) -> None:
    state = RedisState(redis_url, "test")
    ledger = RedisUsageLedger(state, ZONE)
    for record in random_calls(50):
        ledger.record(record)
    state.client.delete(state.key("usage", "calls"))  # counters alone must answer a sum since a local midnight
    since = month_start(START + 25 * 86400, ZoneInfo(ZONE)).timestamp()
    assert ledger.totals(since, sender="telegram:1").calls > 0
    assert ledger.calls() == []
