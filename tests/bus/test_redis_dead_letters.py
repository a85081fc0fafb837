"""Undeliverable replies on the redis bus: kept with their reason, listed by any process, re-sent or dropped."""

from __future__ import annotations

import asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.bus.redis.bus import RedisBus

CHAT = ChatRef("telegram", "77")


async def test_a_failed_reply_is_listed_by_another_process_resent_once_and_then_dropped(redis_url: str) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", block=0.02)
    operator = RedisBus(redis_url, consumer="cli", block=0.02)
    await operator.start()
    for n in (1, 2):
        await gateway.publish_outbound(OutboundMessage(CHAT, f"reply {n}", id=f"r{n}"))
    async with asyncio.timeout(5):
        for _ in (1, 2):
            reply = await gateway.consume_outbound()
            assert await gateway.dead_letters.defer(reply.id, "Bad Gateway") == 1
            await gateway.mark_failed(reply.id, "Forbidden: bot was blocked by the user")

    letters = await operator.dead_letters.letters("telegram:77")
    assert [(d.id, d.direction, d.attempts, d.reason) for d in letters] == [
        (f"r{n}", "out", 1, "Forbidden: bot was blocked by the user") for n in (1, 2)
    ]
    stats = await operator.stats()
    assert (stats.outbound_failed, stats.dead_letters) == (2, 2) and stats.oldest_dead is not None

    assert await operator.dead_letters.retry(["r1", "nope"]) == ["r1"]
    async with asyncio.timeout(5):
        again = await gateway.consume_outbound()
    assert (again.id, again.text) == ("r1", "reply 1")
    await gateway.mark_sent("r1")
    assert [d.id for d in await operator.dead_letters.letters()] == ["r2"]

    assert await operator.dead_letters.drop(before=0.0) == 0
    assert await operator.dead_letters.drop(["r2"]) == 1
    assert await operator.dead_letters.letters() == []
    for bus in (operator, gateway):
        await bus.stop()
