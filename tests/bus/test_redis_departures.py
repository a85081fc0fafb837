"""Telling a worker whose connections all closed (a dead process) from one that is merely quiet or reconnecting."""

from __future__ import annotations

import redis.asyncio as aioredis

from bot.bus.redis.departures import GRACE, LOOK_EVERY, Departures, client_name
from tests.support.polling import until


class Clock:
    """A clock the test moves by hand, so each look at the client list happens at a chosen time."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now

    def tick(self, seconds: float = LOOK_EVERY) -> None:
        self.now += seconds


async def up_two_seconds(client: aioredis.Redis) -> bool:
    return int((await client.info("server"))["uptime_in_seconds"]) >= 2


async def watched(redis_url: str, name: str) -> tuple[aioredis.Redis, aioredis.Redis, Clock, Departures]:
    """A watcher, a connected worker named `name` (on a server up two seconds), and departures on a hand clock."""
    watcher = aioredis.from_url(redis_url, decode_responses=True)
    worker = aioredis.from_url(redis_url, decode_responses=True, client_name=name)
    await until(lambda: up_two_seconds(watcher), 5)
    clock = Clock()
    await worker.ping()
    return watcher, worker, clock, Departures(clock=clock)


async def test_a_name_whose_connections_closed_is_gone_after_the_grace_once(redis_url: str) -> None:
    watcher, worker, clock, departures = await watched(redis_url, "worker-a")
    for _ in range(3):  # connected, however quiet: never gone
        assert await departures.gone(watcher) == []
        clock.tick()
    assert departures.connected == {"worker-a"}
    await worker.aclose()
    assert await departures.gone(watcher) == []  # the first look without it starts the grace
    clock.tick(GRACE)
    assert await departures.gone(watcher) == ["worker-a"]
    clock.tick()
    assert await departures.gone(watcher) == []  # reported once
    await watcher.aclose()


async def test_a_name_that_reconnects_within_the_grace_is_not_gone(redis_url: str) -> None:
    watcher, worker, clock, departures = await watched(redis_url, "worker-b")
    assert await departures.gone(watcher) == []
    clock.tick()
    await worker.connection_pool.disconnect()  # a dropped connection...
    assert await departures.gone(watcher) == []
    await worker.ping()  # ...made again on the next command
    clock.tick(GRACE)
    assert await departures.gone(watcher) == []
    clock.tick(GRACE)
    assert await departures.gone(watcher) == []
    await worker.aclose()
    await watcher.aclose()


async def test_a_name_last_seen_connected_before_the_server_started_is_left_to_its_lease(redis_url: str) -> None:
    watcher = aioredis.from_url(redis_url, decode_responses=True)
    worker = aioredis.from_url(redis_url, decode_responses=True, client_name="worker-c")
    clock = Clock()
    departures = Departures(clock=clock)
    await worker.ping()
    assert await departures.gone(watcher) == []
    await worker.aclose()
    clock.tick(3600)  # the next look comes an hour later: the server (up seconds) restarted since the last
    assert await departures.gone(watcher) == []
    clock.tick(GRACE)
    assert await departures.gone(watcher) == []  # after a restart the others may still be reconnecting
    await watcher.aclose()


def test_a_consumer_name_redis_cannot_take_leaves_the_connections_unnamed() -> None:
    assert client_name("host-12-ab12cd") == "host-12-ab12cd"
    assert client_name("worker a") is None
    assert client_name("") is None
