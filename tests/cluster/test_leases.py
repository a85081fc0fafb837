"""Leases against a real redis-server: one holder at a time, a standby takes over only after the holder dies."""

from __future__ import annotations

import asyncio

from bot.cancelling import cancel_and_wait
from bot.cluster.leases import Lease


async def test_a_standby_waits_while_the_holder_renews_and_takes_over_when_it_dies(redis_url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url, decode_responses=True)
    holder = Lease(client, "t:lease", "a", ttl=0.3)
    standby = Lease(client, "t:lease", "b", ttl=0.3)
    await holder.hold()
    waiting = asyncio.create_task(standby.hold())
    await asyncio.sleep(0.5)  # longer than the ttl
    assert not waiting.done() and await client.get("t:lease") == "a"
    await cancel_and_wait(holder._renewer)  # the holder dies without releasing
    await asyncio.wait_for(waiting, 1.0)
    assert await client.get("t:lease") == "b"
    await holder.release()  # compare-and-delete: the dead holder cannot remove the new holder's lease
    assert await client.get("t:lease") == "b"
    await standby.release()
    assert await client.get("t:lease") is None
    await client.aclose()


async def test_a_holder_whose_lease_was_taken_learns_it_lost(redis_url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url, decode_responses=True)
    holder = Lease(client, "t:lease", "a", ttl=0.3)
    lost = asyncio.Event()

    async def on_lost() -> None:
        lost.set()

    await holder.hold(on_lost)
    await client.set("t:lease", "intruder")
    await asyncio.wait_for(lost.wait(), 1.0)
    assert holder.lost.is_set()
    await holder.release()
    assert await client.get("t:lease") == "intruder"
    await client.aclose()
