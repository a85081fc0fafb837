"""The approvals' allow list, on files and in Redis: add, check, list, remove; the file is private."""

from pathlib import Path

from bot.cluster.redis import RedisState
from bot.plugins.allowlist import AllowList, LocalAllowList
from bot.plugins.redis_allowlist import RedisAllowList


def exercise(allowed: AllowList) -> None:
    assert allowed.entries() == [] and not allowed.allows("rm -r junk")
    allowed.add("rm -r junk")
    allowed.add("write_file SOUL.md")
    allowed.add("rm -r junk")
    assert allowed.allows("rm -r junk") and not allowed.allows("rm -r junk2")
    assert allowed.entries() == ["rm -r junk", "write_file SOUL.md"]
    assert allowed.remove("rm -r junk") and not allowed.remove("rm -r junk")
    assert allowed.entries() == ["write_file SOUL.md"]


def test_local_allow_list_keeps_exact_entries_in_a_private_file(tmp_path: Path) -> None:
    path = tmp_path / "state" / "allowed.db"
    exercise(LocalAllowList(path))
    assert path.stat().st_mode & 0o777 == 0o600
    assert LocalAllowList(path).entries() == ["write_file SOUL.md"]


def test_redis_allow_list_is_shared_by_every_process(redis_url: str) -> None:
    exercise(RedisAllowList(RedisState(redis_url, "t1")))
    assert RedisAllowList(RedisState(redis_url, "t1")).entries() == ["write_file SOUL.md"]
    assert RedisAllowList(RedisState(redis_url, "t2")).entries() == []
