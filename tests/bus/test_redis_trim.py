"""Trimming the bus's streams: old finished entries go; pending, unread and recent ones stay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.bus.redis.connection import connect
from bot.bus.redis.trim import StreamTrimmer

STREAM, GROUP = "t:inbox", "workers"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[Any]:
    client = connect(redis_url)
    await client.xgroup_create(STREAM, GROUP, id="0", mkstream=True)
    for second in range(1, 6):
        await client.xadd(STREAM, {"n": str(second)}, id=f"{second * 1000}-0")
    yield client
    await client.aclose()


async def ids(redis: Any) -> list[str]:
    return [entry for entry, _ in await redis.xrange(STREAM)]


async def test_finished_entries_go_but_pending_and_unread_ones_stay(redis: Any) -> None:
    await redis.xreadgroup(GROUP, "w1", {STREAM: ">"}, count=3)
    await redis.xack(STREAM, GROUP, "1000-0", "2000-0")
    trimmer = StreamTrimmer(retention=0.0, clock=lambda: 100.0)
    assert await trimmer.maybe_trim(redis, [(STREAM, GROUP)]) == 2
    assert await ids(redis) == ["3000-0", "4000-0", "5000-0"]


async def test_entries_within_the_retention_stay_even_when_finished(redis: Any) -> None:
    read = await redis.xreadgroup(GROUP, "w1", {STREAM: ">"})
    await redis.xack(STREAM, GROUP, *[entry for entry, _ in read[0][1]])
    trimmer = StreamTrimmer(retention=7.0, clock=lambda: 10.0)
    assert await trimmer.maybe_trim(redis, [(STREAM, GROUP)]) == 2
    assert await ids(redis) == ["3000-0", "4000-0", "5000-0"]


async def test_it_trims_at_most_once_per_interval(redis: Any) -> None:
    read = await redis.xreadgroup(GROUP, "w1", {STREAM: ">"})
    await redis.xack(STREAM, GROUP, *[entry for entry, _ in read[0][1]])
    now = [10.0]
    trimmer = StreamTrimmer(retention=8.0, every=60.0, clock=lambda: now[0])
    assert await trimmer.maybe_trim(redis, [(STREAM, GROUP)]) == 1
    now[0] = 13.0
    assert await trimmer.maybe_trim(redis, [(STREAM, GROUP)]) == 0
    now[0] = 71.0
    assert await trimmer.maybe_trim(redis, [(STREAM, GROUP)]) == 3  # the last read entry stays
    assert await ids(redis) == ["5000-0"]
