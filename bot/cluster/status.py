"""`relaybot status` on the redis bus: who holds which lease, workers and gateways with their messages, backlog."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from bot.bus.dead_letters import format_age
from bot.bus.redis.bus import RedisBus
from bot.bus.redis.inbox import WORKERS
from bot.bus.redis.outbox import GATEWAYS

if TYPE_CHECKING:
    from redis.asyncio import Redis


async def _consumers(redis: Redis, stream: str, group: str) -> list[dict[str, Any]]:
    """The consumers of `group` on `stream`; none when nobody ever read it."""
    if not await redis.exists(stream):
        return []
    if group not in {g["name"] for g in await redis.xinfo_groups(stream)}:
        return []
    return list(await redis.xinfo_consumers(stream, group))


async def describe_cluster(bus: RedisBus) -> list[str]:
    """Lines for the status command: leases and holders, consumers with their pending messages, backlog per stream."""
    await bus.start()
    try:
        lines = []
        async for key in bus.redis.scan_iter(match=bus.key("lease", "*")):
            holder = await bus.redis.get(key)
            ttl = await bus.redis.pttl(key)
            name = key.removeprefix(bus.key("lease", ""))
            lines.append(f"lease {name}: held by {holder!s} ({max(ttl, 0) / 1000:.1f}s left)")
        backlog = await bus.backlog()
        for index, stream in enumerate(backlog):
            group, what = (WORKERS, "worker") if index == 0 else (GATEWAYS, "gateway")
            name = stream.stream.removeprefix(bus.key(""))
            for consumer in await _consumers(bus.redis, stream.stream, group):
                lines.append(
                    f"{what} {consumer['name']} on {name}: {consumer['pending']} messages in hand, "
                    f"idle {consumer['idle'] / 1000:.1f}s"
                )
        for stream in backlog:
            lines.append(
                f"stream {stream.stream.removeprefix(bus.key(''))}: {stream.pending} in hand, {stream.unread} unread"
            )
        stats = await bus.stats()
        lines.append(
            f"backlog: {stats.inbound_pending} messages pending, {stats.outbound_pending} replies unsent; "
            f"{stats.inbound_failed} failed, {stats.outbound_failed} undeliverable"
        )
        if stats.oldest_dead is not None:
            waited = format_age(time.time() - stats.oldest_dead)
            lines.append(f"dead letters: {stats.dead_letters}, the oldest {waited} old (see `relaybot queue list`)")
        return lines
    finally:
        await bus.stop()
