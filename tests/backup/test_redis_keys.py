"""The bus's Redis keys: every type under the prefix goes out with DUMP and comes back with RESTORE, TTLs kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from redis import Redis

from bot.backup.redis_keys import export_keys, import_keys
from bot.errors import BackupError


def test_keys_under_the_prefix_round_trip_and_others_stay_out(redis_url: str, tmp_path: Path) -> None:
    client = Redis.from_url(redis_url)
    client.hset("rb:pairing", mapping={"telegram:7": "approved"})
    client.xadd("rb:inbox", {"body": "hi"})
    client.zadd("rb:ledger", {"call-1": 1.0})
    client.set("rb:lease", "me", px=600_000)
    client.set("other:key", "x")
    dump = tmp_path / "redis.jsonl"
    assert export_keys(redis_url, "rb", dump) == 4
    client.flushdb()

    assert import_keys(redis_url, "rb", dump) == 4
    assert client.hget("rb:pairing", "telegram:7") == b"approved"
    assert client.xlen("rb:inbox") == 1
    assert client.zscore("rb:ledger", "call-1") == 1.0
    assert 0 < client.pttl("rb:lease") <= 600_000
    assert client.exists("other:key") == 0
    client.close()


def test_import_refuses_a_prefix_that_holds_keys(redis_url: str, tmp_path: Path) -> None:
    client = Redis.from_url(redis_url)
    client.set("rb:x", "1")
    dump = tmp_path / "redis.jsonl"
    export_keys(redis_url, "rb", dump)
    with pytest.raises(BackupError, match="already holds keys"):
        import_keys(redis_url, "rb", dump)
    client.close()
