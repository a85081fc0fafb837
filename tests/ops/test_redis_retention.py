"""Retention on the redis bus: old call records and sessions archived by /new leave Redis; live ones stay."""

from __future__ import annotations

import time
from pathlib import Path

from bot.app.redis_stores import RedisStores
from bot.config.schema import Config
from bot.ops.retention import prune_shared
from bot.usage.ledger import CallRecord

DAY = 86400.0


def call(ts: float) -> CallRecord:
    return CallRecord(ts, "t:1", "t:u", "turn", "m", 1, 1, 0, None, False, 0.1, "ok")


async def test_old_calls_and_archived_sessions_are_pruned_from_redis(tmp_path: Path, redis_url: str) -> None:
    config = Config.model_validate(
        {
            "workspace": tmp_path / "w",
            "state_dir": tmp_path / "s",
            "bus": {"backend": "redis", "url": redis_url, "prefix": "rb"},
            "retention": {"sessions": "30d", "ledger": "30d"},
        }
    )
    stores = RedisStores(config)
    now = time.time()
    ledger = stores.ledger()
    for ts in (now - 100 * DAY, now - 1):
        ledger.record(call(ts))
    sessions = stores.sessions()
    live = sessions.get("t:1")
    sessions.append(live, [{"role": "user", "content": "old chat"}])
    sessions.reset("t:1")  # archived now
    sessions.append(sessions.get("t:1"), [{"role": "user", "content": "new chat"}])

    pruned = prune_shared(config, now)
    assert (pruned.sessions, pruned.ledger) == (0, 1)  # archived today: kept
    assert [c.ts for c in ledger.calls()] == [now - 1]

    assert prune_shared(config, now + 31 * DAY).sessions == 1
    assert stores.state.client.keys("rb:session-archive:*") == []
    assert [m["content"] for m in sessions.recent("t:1", 10)] == ["new chat"]
    await stores.aclose()
