"""How soon a dead worker's messages move on the redis bus, and that a stalled but live worker keeps its own."""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.bus.redis.bus import RedisBus
from bot.bus.redis.inbox import DEAD_CHECKS_PER_LEASE
from tests.bus.test_redis_handoff import PausableBus

CHATS = [ChatRef("telegram", str(300 + n)) for n in range(3)]
LEASE = 1.2


async def hold_three(url: str, holder: RedisBus) -> tuple[RedisBus, set[str]]:
    """A gateway publishes one message to each of three chats and `holder` takes all three."""
    gateway = RedisBus(url, consumer="gateway", block=0.02)
    sent = set()
    for chat in CHATS:
        message = InboundMessage(chat, "u", "hi")
        assert await gateway.publish_inbound(message)
        sent.add(message.id)
    async with asyncio.timeout(5):
        taken = {(await holder.consume_inbound()).id for _ in CHATS}
    assert taken == sent
    return gateway, sent


async def test_a_dead_workers_messages_are_claimed_within_its_lease_and_a_check(redis_url: str) -> None:
    doomed = PausableBus(redis_url, consumer="doomed", block=0.02, lease=LEASE, claim_idle=60.0)
    gateway, sent = await hold_three(redis_url, doomed)
    survivor = RedisBus(redis_url, consumer="survivor", block=0.02, lease=LEASE, claim_idle=60.0)
    reading = asyncio.create_task(survivor.consume_inbound())
    await doomed.pause()  # like a SIGKILL: it renews nothing, and its lease, locks and entries stay
    killed = time.monotonic()
    async with asyncio.timeout(5):
        claimed = {(await reading).id} | {(await survivor.consume_inbound()).id for _ in CHATS[1:]}
    took = time.monotonic() - killed
    assert claimed == sent
    assert took < LEASE + LEASE / DEAD_CHECKS_PER_LEASE + 0.2, f"claimed {took:.2f}s after the last renewal stopped"
    doomed.resume()
    for bus in (survivor, doomed, gateway):
        await bus.stop()


async def test_a_worker_whose_connections_all_closed_loses_its_messages_long_before_its_lease_lapses(
    redis_url: str,
) -> None:
    from tests.support.polling import until

    lease = 60.0  # longer than the test may take: only the closed connections tell the worker died
    doomed = PausableBus(redis_url, consumer="doomed", block=0.02, lease=lease, claim_idle=600.0)
    gateway, sent = await hold_three(redis_url, doomed)
    await until(lambda: server_up_two_seconds(gateway), 5)  # a just-started server may miss reconnecting clients
    survivor = RedisBus(redis_url, consumer="survivor", block=0.02, lease=lease, claim_idle=600.0)
    reading = asyncio.create_task(survivor.consume_inbound())
    await until(lambda: "doomed" in survivor._inbox._departures.connected, 5)
    await doomed.pause()  # it runs no more rounds, so it reconnects nothing
    for client in await gateway.redis.client_list(_type="normal"):  # what the kernel does to a SIGKILLed process
        if client["name"] == "doomed":
            await gateway.redis.client_kill_filter(_id=client["id"])
    async with asyncio.timeout(10):
        claimed = {(await reading).id} | {(await survivor.consume_inbound()).id for _ in CHATS[1:]}
    assert claimed == sent
    assert await gateway.redis.pttl(doomed.key("alive", "doomed")) == -2, "its liveness lease was ended"
    doomed.resume()
    for bus in (survivor, doomed, gateway):
        await bus.stop()


async def server_up_two_seconds(bus: RedisBus) -> bool:
    """Whether the server has been up two seconds (a dead worker is told by its connections only after that)."""
    return int((await bus.redis.info("server"))["uptime_in_seconds"]) >= 2


@pytest.mark.slow
async def test_a_worker_stalled_for_half_its_lease_keeps_its_messages(redis_url: str) -> None:
    stalled = PausableBus(redis_url, consumer="stalled", block=0.02, lease=LEASE, claim_idle=60.0)
    gateway, _ = await hold_three(redis_url, stalled)
    eager = RedisBus(redis_url, consumer="eager", block=0.02, lease=LEASE, claim_idle=60.0)
    reading = asyncio.create_task(eager.consume_inbound())
    await stalled.pause()  # a loaded machine: no renewal for half a lease
    await asyncio.sleep(LEASE / 2)
    stalled.resume()
    await asyncio.sleep(LEASE)  # the renewal came in time: nothing lapses, nothing is claimed
    assert not reading.done(), "a live worker's messages were taken"
    summary = await gateway.redis.xpending(gateway.key("inbox"), "workers")
    assert {c["name"]: int(c["pending"]) for c in summary["consumers"]} == {"stalled": 3}
    reading.cancel()
    for bus in (eager, stalled, gateway):
        await bus.stop()


async def test_a_message_whose_turns_died_twice_gets_an_apology_then_a_retry_runs_it_again(
    redis_url: str,
) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", block=0.02)
    gateway.deliver_for([CHATS[0].channel])
    message = InboundMessage(CHATS[0], "u", "poison")
    assert await gateway.publish_inbound(message)
    fast = {"block": 0.02, "lease": 0.4, "claim_idle": 60.0}
    dead = []
    for name in ("first", "second"):  # each starts the turn, then dies in it
        worker = PausableBus(redis_url, consumer=name, **fast)
        dead.append(worker)
        async with asyncio.timeout(5):
            assert (await worker.consume_inbound()).id == message.id
        await worker.begin_inbound([message.id])
        await worker.pause()
    third = RedisBus(redis_url, consumer="third", **fast)
    taken = asyncio.create_task(third.consume_inbound())
    async with asyncio.timeout(5):
        apology = await gateway.consume_outbound()
    assert (apology.in_reply_to, apology.kind, apology.id) == (message.id, "error", f"{message.id}:apology")
    assert not taken.done(), "the message is not run a third time"
    taken.cancel()
    await asyncio.gather(taken, return_exceptions=True)
    assert (await gateway.stats()).inbound_failed == 1
    [letter] = await gateway.dead_letters.letters()
    assert (letter.id, letter.direction, letter.attempts, letter.text) == (message.id, "in", 2, "poison")

    assert await gateway.dead_letters.retry([message.id]) == [message.id]  # run again, its crash count reset
    async with asyncio.timeout(5):
        again = await third.consume_inbound()
    assert again.id == message.id and await gateway.dead_letters.letters() == []
    await third.begin_inbound([message.id])
    await third.publish_outbound(OutboundMessage(CHATS[0], "answered", message.id, id="answer"), [message.id])
    async with asyncio.timeout(5):
        assert (await gateway.consume_outbound()).text == "answered"
    for worker in dead:
        worker.resume()
    for bus in (third, *dead, gateway):
        await bus.stop()
