"""A Redis that stops answering: the bus logs it, retries and carries on; a lease holder steps down in time."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import pytest

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.bus.redis.bus import RedisBus
from bot.bus.redis.connection import connect
from bot.cluster.leases import Lease

CHAT = ChatRef("telegram", "1")


async def pause_server(url: str, millis: int) -> None:
    """CLIENT PAUSE: the server holds every client's commands for `millis`, like a hung or partitioned Redis."""
    admin = connect(url)
    await admin.execute_command("CLIENT", "PAUSE", millis, "ALL")
    await admin.aclose()


async def wait_out_pause(url: str) -> None:
    """Return once the server answers again: a PING waits behind CLIENT PAUSE like every other command."""
    probe = connect(url, timeout=30)
    await probe.ping()
    await probe.aclose()


async def answer_one(worker: RedisBus, gateway: RedisBus, text: str) -> OutboundMessage:
    message = InboundMessage(CHAT, "u", text)
    assert await gateway.publish_inbound(message)
    async with asyncio.timeout(5):
        got = await worker.consume_inbound()
        await worker.publish_outbound(OutboundMessage(CHAT, f"re {got.text}", got.id, id=f"{got.id}:r"), [got.id])
        reply = await gateway.consume_outbound()
    await gateway.mark_sent(reply.id)
    return reply


async def test_the_readers_log_an_outage_and_carry_on_after_it(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.bus.redis")
    gateway = RedisBus(redis_url, consumer="gw", block=0.02, timeout=0.2)
    gateway.deliver_for(["telegram"])
    worker = RedisBus(redis_url, consumer="w", block=0.02, timeout=0.2)
    assert (await answer_one(worker, gateway, "before")).text == "re before"

    await pause_server(redis_url, 1500)
    await wait_out_pause(redis_url)
    assert "the inbound reader failed (TimeoutError" in caplog.text
    assert (await answer_one(worker, gateway, "after")).text == "re after"
    assert "reader is back after" in caplog.text
    await worker.stop()
    await gateway.stop()


async def test_a_holder_that_cannot_renew_steps_down_before_its_lease_expires(redis_url: str) -> None:
    client = connect(redis_url, timeout=0.1)
    holder = Lease(client, "t:lease", "a", ttl=0.6)
    stepped_down = asyncio.Event()

    async def on_lost() -> None:
        stepped_down.set()

    await holder.hold(on_lost)
    renewed = time.monotonic()
    await pause_server(redis_url, 1000)
    await asyncio.wait_for(stepped_down.wait(), 1.0)
    assert time.monotonic() - renewed < 0.6, "it stopped before another holder could take the lease"
    await holder.release()
    await client.aclose()


async def test_stop_ends_the_readers_even_when_a_redis_call_swallows_the_cancel(redis_url: str) -> None:
    bus = RedisBus(redis_url, consumer="w", block=0.02)
    bus.deliver_for(["telegram"])
    await bus.start()
    real = bus._scope.read_group  # where each reader waits: its blocking read
    swallowed: list[str] = []
    reading: set[str] = set()  # the readers inside their blocking read right now
    both_reading = asyncio.Event()

    async def swallowing(*args: Any, **options: Any) -> Any:
        """What asyncio.wait_for does on Python 3.11 when a cancel meets a finished send (CPython gh-86296)."""
        group = str(args[1])
        call = asyncio.ensure_future(real(*args, **options))
        reading.add(group)
        if len(reading) == 2:
            both_reading.set()
        try:
            return await asyncio.shield(call)
        except asyncio.CancelledError:
            if len(swallowed) == 2:
                call.cancel()
                raise
            swallowed.append(group)
            return await call  # the command's result, as if the cancel had never come
        finally:
            reading.discard(group)

    bus._scope.read_group = swallowing  # type: ignore[method-assign]
    readers = [asyncio.create_task(bus.consume_inbound()), asyncio.create_task(bus.consume_outbound())]
    await asyncio.wait_for(both_reading.wait(), 5)
    await asyncio.wait_for(bus.stop(), 2)
    assert len(swallowed) == 2, "both readers swallowed the first cancel, and still ended"
    for reader in readers:
        reader.cancel()
