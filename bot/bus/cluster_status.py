"""`relaybot status` on the redis bus: who holds which lease, the workers and their messages, the backlog."""

from __future__ import annotations

from bot.bus.redis import GATEWAYS, WORKERS, RedisBus


async def describe_cluster(bus: RedisBus) -> list[str]:
    """Lines for the status command: leases and their holders, workers with their pending messages, backlog."""
    await bus.start()
    try:
        lines = []
        async for key in bus.redis.scan_iter(match=bus.key("lease", "*")):
            holder = await bus.redis.get(key)
            ttl = await bus.redis.pttl(key)
            name = key.removeprefix(bus.key("lease", ""))
            lines.append(f"lease {name}: held by {holder} ({max(ttl, 0) / 1000:.1f}s left)")
        for stream, group, what in (("inbox", WORKERS, "worker"), ("outbox", GATEWAYS, "gateway")):
            for consumer in await bus.redis.xinfo_consumers(bus.key(stream), group):
                lines.append(
                    f"{what} {consumer['name']}: {consumer['pending']} messages in hand, "
                    f"idle {consumer['idle'] / 1000:.1f}s"
                )
        stats = await bus.stats()
        lines.append(
            f"backlog: {stats.inbound_pending} messages pending, {stats.outbound_pending} replies unsent; "
            f"{stats.inbound_failed} failed, {stats.outbound_failed} undeliverable"
        )
        return lines
    finally:
        await bus.stop()
