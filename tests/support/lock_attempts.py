"""Seeing a Redis lock waiter try: taking a redis-py lock is a SET NX, and the server counts every SET it runs."""

from __future__ import annotations

from bot.cluster.redis import RedisState
from tests.support.polling import until


async def lock_attempts(state: RedisState) -> int:
    """How many SETs the server has run so far."""
    stats = await state.aclient.info("commandstats")
    return int(stats.get("cmdstat_set", {}).get("calls", 0))


async def tried_since(state: RedisState, before: int) -> None:
    """Return once the server has run a SET after `before` was counted: a waiter asked for a lock (and, while the
    holder holds it, was refused)."""

    async def more() -> bool:
        return await lock_attempts(state) > before

    await until(more, 5)
