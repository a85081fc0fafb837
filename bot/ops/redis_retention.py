"""Retention on the redis bus: ledger call records and sessions archived by /new, past their age, leave Redis."""

from __future__ import annotations

import re
import time

from bot.cluster.redis import RedisState
from bot.config.schema_ops import RetentionConfig
from bot.sessions.redis_logs import PRUNED_KEY

_ARCHIVED = re.compile(r"\.(\d{8}T\d{6})\.[0-9a-zA-Z]{8}$")  # how RedisSessionStore.reset names an archive
SCAN_COUNT = 500


def prune_redis(state: RedisState, keep: RetentionConfig, ledger_before: float, now: float) -> tuple[int, int]:
    """Drop call records before `ledger_before` and archives older than `keep.sessions`: (sessions, calls) removed.

    The ledger's day and month totals stay: they are small, and `relaybot usage` over old periods reads them.
    """
    client = state.client
    calls = (
        int(client.zremrangebyscore(state.key("usage", "calls"), "-inf", f"({ledger_before!r}")) if keep.ledger else 0
    )
    sessions = 0
    if keep.sessions:
        prefix = state.key("session-archive", "")
        for meta in client.scan_iter(match=f"{prefix}*:meta", count=SCAN_COUNT):
            archive = str(meta)[len(prefix) : -len(":meta")]
            stamp = _ARCHIVED.search(archive)
            if stamp is None:
                continue
            archived_at = time.mktime(time.strptime(stamp.group(1), "%Y%m%dT%H%M%S"))  # reset() names it in local time
            if archived_at < now - keep.sessions:
                client.delete(meta, state.key("session-archive", archive, "log"))
                sessions += 1
    if sessions:
        client.incr(state.key(PRUNED_KEY))
    return sessions, calls
