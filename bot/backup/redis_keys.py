"""The keys under `bus.prefix` on Redis, exported with DUMP and put back with RESTORE."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING

from bot.errors import BackupError

if TYPE_CHECKING:
    from redis import Redis

REDIS_MEMBER = "redis.jsonl"


def _client(url: str) -> Redis:
    from redis import Redis

    return Redis.from_url(url, socket_timeout=30, socket_connect_timeout=5)


def export_keys(url: str, prefix: str, target: Path) -> int:
    """Write every key under `prefix:` as one JSON line (its name, DUMP payload and TTL); return how many."""
    client = _client(url)
    count = 0
    try:
        with target.open("w", encoding="utf-8") as out:
            for key in client.scan_iter(match=f"{prefix}:*", count=1000):
                payload = client.dump(key)
                if payload is None:
                    continue  # it expired between SCAN and DUMP
                ttl = int(client.pttl(key))
                line = {"key": _b64(key), "ttl": max(ttl, 0), "dump": _b64(payload)}
                out.write(json.dumps(line) + "\n")
                count += 1
    finally:
        client.close()
    return count


def import_keys(url: str, prefix: str, source: Path) -> int:
    """RESTORE the keys of an export; BackupError when keys under `prefix:` exist already (nothing is overwritten)."""
    client = _client(url)
    try:
        if next(iter(client.scan_iter(match=f"{prefix}:*", count=1000)), None) is not None:
            raise BackupError(f"Redis already holds keys under {prefix}:; restore into an empty prefix", str(source))
        count = 0
        for line in source.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            client.restore(base64.b64decode(entry["key"]), int(entry["ttl"]), base64.b64decode(entry["dump"]))
            count += 1
    finally:
        client.close()
    return count


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
