"""Leases against a real redis-server: one holder at a time, a standby takes over only after the holder dies."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest

from bot.cancelling import cancel_and_wait
from bot.cluster.leases import Lease

if TYPE_CHECKING:
    from redis.asyncio import Redis

TTL = 1.0  # wide, so a holder on a loaded machine still renews well inside it (0.3 s did not leave room)


@pytest.mark.slow
async def test_a_standby_waits_while_the_holder_renews_and_takes_over_when_it_dies(redis_url: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url, decode_responses=True)
    holder = Lease(client, "t:lease", "a", ttl=TTL)
    standby = Lease(client, "t:lease", "b", ttl=TTL)
    await holder.hold()
    waiting = asyncio.create_task(standby.hold())
    await asyncio.sleep(TTL * 1.5)  # longer than the ttl: only renewals keep the holder's lease
    assert not waiting.done() and await client.get("t:lease") == "a"
    await cancel_and_wait(holder._renewer)  # the holder dies without releasing
    await asyncio.wait_for(waiting, TTL * 2.5)  # it takes over within 4/3 of the ttl, plus slack for a loaded machine
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


async def test_a_holder_whose_loop_stalled_past_the_renewal_deadline_keeps_a_lease_nobody_took(redis_url: str) -> None:
    import redis.asyncio as aioredis

    from tests.support.polling import until

    ttl, stall = 3.0, 2.4  # renewals due every second and within 2 s of the last; the stall is past that, within ttl
    stalled = 0.0
    client = aioredis.from_url(redis_url, decode_responses=True)
    holder = Lease(client, "t:lease", "a", ttl=ttl, clock=lambda: time.monotonic() + stalled)
    await holder.hold()
    # The loop stalls (imports on a loaded machine): its clock jumps, and Redis's ttl ran down as long meanwhile.
    stalled = stall
    await client.pexpire("t:lease", int((ttl - stall) * 1000))

    async def renewed() -> bool:
        return await client.pttl("t:lease") > (ttl - stall) * 1000

    await until(renewed, ttl)
    assert not holder.lost.is_set() and await client.get("t:lease") == "a"
    await holder.release()
    await client.aclose()


async def test_a_standby_tries_again_when_the_holders_lease_expires_not_a_third_of_its_ttl_later(
    redis_url: str,
) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url, decode_responses=True)
    await client.set("t:lease", "dead holder", px=300)  # its holder died: nobody renews it
    standby = Lease(client, "t:lease", "b", ttl=3.0)  # retrying every third of the ttl would take a second
    loop = asyncio.get_running_loop()
    started = loop.time()
    await asyncio.wait_for(standby.hold(), 3.0)
    assert loop.time() - started < 0.9
    assert await client.get("t:lease") == "b"
    await standby.release()
    await client.aclose()


async def test_a_standby_takes_over_at_once_when_the_holders_connections_all_close(redis_url: str) -> None:
    import redis.asyncio as aioredis

    from bot.cluster.holders import HolderWatch
    from tests.support.polling import until

    ttl = 30.0  # far longer than the test may take: only the closed connections can hand the lease over
    holder_client = aioredis.from_url(redis_url, decode_responses=True, client_name="holder-1")
    client = aioredis.from_url(redis_url, decode_responses=True, client_name="standby-1")
    await until(lambda: up_two_seconds(client), 5)  # a server just started may still miss its reconnecting clients
    holder = Lease(holder_client, "t:lease", "holder-1", ttl=ttl)
    watch = HolderWatch()
    standby = Lease(client, "t:lease", "standby-1", ttl=ttl, watch=watch)
    await holder.hold()
    waiting = asyncio.create_task(standby.hold())
    await until(lambda: "holder-1" in watch.connected, 5)
    assert not waiting.done()
    await cancel_and_wait(holder._renewer)  # the holder's process dies: no release, its sockets closed by the kernel
    await holder_client.aclose()
    await asyncio.wait_for(waiting, 5)
    assert await client.get("t:lease") == "standby-1"
    await standby.release()
    await client.aclose()


async def up_two_seconds(client: Redis) -> bool:
    """Whether the server has been up two seconds (Departures reads its uptime in whole seconds)."""
    return int((await client.info("server"))["uptime_in_seconds"]) >= 2
