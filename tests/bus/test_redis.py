"""The redis bus against a real redis-server: a gateway and two workers, ordering, exactly once, a killed worker."""

from __future__ import annotations

import asyncio
import random
from collections import defaultdict

import pytest

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.bus.redis.bus import RedisBus
from tests.support.polling import until

CHATS = [ChatRef("telegram", str(100 + n)) for n in range(20)]


class LaneWorker:
    """A stand-in for the agent loop: one lane per session, each turn a short pause then a reply."""

    def __init__(self, bus: RedisBus, log: dict[str, list[int]], pause: float = 0.005) -> None:
        self.bus = bus
        self.log = log
        self.pause = pause
        self.jitter = True
        self.lanes: dict[str, asyncio.Queue[InboundMessage]] = {}
        self.busy = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.running: set[str] = set()

    async def run(self) -> None:
        while True:
            message = await self.bus.consume_inbound()
            key = message.chat.session_key
            if key not in self.lanes:
                self.lanes[key] = asyncio.Queue()
                self.tasks.append(asyncio.create_task(self._lane(self.lanes[key])))
            self.lanes[key].put_nowait(message)
            self.busy.set()

    async def _lane(self, queue: asyncio.Queue[InboundMessage]) -> None:
        while True:
            message = await queue.get()
            key = message.chat.session_key
            self.log[key].append(int(message.text))
            await self.bus.begin_inbound([message.id])
            await asyncio.sleep(self.pause * (random.random() if self.jitter else 1.0))
            reply = OutboundMessage(message.chat, f"re {message.text}", message.id, id=f"{message.id}:reply")
            await self.bus.publish_outbound(reply, completes=[message.id])

    def kill(self) -> None:
        for task in self.tasks:
            task.cancel()


async def start_worker(
    url: str, name: str, log: dict[str, list[int]], **timing: float
) -> tuple[RedisBus, LaneWorker, asyncio.Task[None]]:
    bus = RedisBus(url, consumer=name, block=0.02, **timing)
    await bus.start()
    worker = LaneWorker(bus, log)
    return bus, worker, asyncio.create_task(worker.run())


async def collect_replies(gateway: RedisBus, count: int, timeout: float = 20.0) -> list[OutboundMessage]:
    replies = []
    async with asyncio.timeout(timeout):
        while len(replies) < count:
            reply = await gateway.consume_outbound()
            await gateway.mark_sent(reply.id)
            replies.append(reply)
    return replies


async def publish_burst(gateway: RedisBus, count: int) -> dict[str, InboundMessage]:
    sent = {}
    for n in range(count):
        chat = CHATS[n % len(CHATS)]
        message = InboundMessage(chat, "u", str(n // len(CHATS)), platform_message_id=str(n))
        assert await gateway.publish_inbound(message)
        sent[message.id] = message
    return sent


def assert_answered_once_in_order(replies: list[OutboundMessage], sent: dict[str, InboundMessage]) -> None:
    assert sorted(r.in_reply_to for r in replies) == sorted(sent)
    per_chat: dict[str, list[int]] = defaultdict(list)
    for reply in replies:
        per_chat[reply.chat.session_key].append(int(reply.text.split()[1]))
    assert all(numbers == sorted(numbers) for numbers in per_chat.values()), per_chat


async def test_a_gateway_and_two_workers_answer_each_message_once_in_chat_order(redis_url: str) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", block=0.02)
    gateway.deliver_for(["telegram"])
    await gateway.start()
    log: dict[str, list[int]] = defaultdict(list)
    workers = [await start_worker(redis_url, f"w{i}", log) for i in range(2)]
    sent = await publish_burst(gateway, 100)
    assert not await gateway.publish_inbound(InboundMessage(CHATS[0], "u", "0", platform_message_id="0"))
    replies = await collect_replies(gateway, 100)
    assert_answered_once_in_order(replies, sent)
    assert all(turns == sorted(turns) and len(set(turns)) == len(turns) for turns in log.values()), log
    assert all(w.lanes for _, w, _ in workers), "both workers took a share"
    stats = await gateway.stats()
    assert (stats.inbound_pending, stats.outbound_pending) == (0, 0)
    for bus, worker, task in workers:
        worker.kill()
        task.cancel()
        await bus.stop()
    await gateway.stop()


async def test_a_worker_killed_mid_burst_loses_nothing(redis_url: str) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", block=0.02)
    gateway.deliver_for(["telegram"])
    await gateway.start()
    log: dict[str, list[int]] = defaultdict(list)
    timing = {"lease": 0.6, "claim_idle": 0.5}
    doomed_bus, doomed, doomed_task = await start_worker(redis_url, "doomed", log, **timing)
    doomed.pause = 10.0  # every turn it starts is still running when it dies
    sent = await publish_burst(gateway, 100)
    await asyncio.wait_for(doomed.busy.wait(), 5)
    survivor = await start_worker(redis_url, "survivor", log, **timing)
    doomed.kill()  # like SIGKILL: nothing completed, nothing released
    doomed_task.cancel()
    await doomed_bus.stop()
    replies = await collect_replies(gateway, 100)
    assert_answered_once_in_order(replies, sent)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await gateway.consume_outbound()
    survivor[1].kill()
    survivor[2].cancel()
    await survivor[0].stop()
    await gateway.stop()


async def test_a_live_worker_keeps_its_messages_however_long_its_turns_run(redis_url: str) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", block=0.02)
    gateway.deliver_for(["telegram"])
    await gateway.start()
    timing = {"lease": 0.3, "claim_idle": 60.0}
    slow_log: dict[str, list[int]] = defaultdict(list)
    slow_bus, slow, slow_task = await start_worker(redis_url, "slow", slow_log, **timing)
    slow.pause, slow.jitter = 1.0, False  # each turn outlives three leases
    sent = {}
    for n in range(6):
        message = InboundMessage(CHATS[n % 3], "u", str(n // 3), platform_message_id=str(n))
        assert await gateway.publish_inbound(message)
        sent[message.id] = message

    def all_held() -> bool:
        return sum(q.qsize() for q in slow.lanes.values()) + sum(map(len, slow_log.values())) == 6

    await until(all_held, timeout=5)
    eager_log: dict[str, list[int]] = defaultdict(list)
    eager = await start_worker(redis_url, "eager", eager_log, **timing)
    replies = await collect_replies(gateway, 6)
    assert_answered_once_in_order(replies, sent)
    assert not eager_log, "nothing was taken from the live worker"
    assert sum(map(len, slow_log.values())) == 6
    for bus, worker, task in (eager, (slow_bus, slow, slow_task)):
        worker.kill()
        task.cancel()
        await bus.stop()
    await gateway.stop()


async def test_a_late_duplicate_reply_is_dropped_at_the_outbox(redis_url: str) -> None:
    bus = RedisBus(redis_url, consumer="solo")
    await bus.start()
    reply = OutboundMessage(CHATS[0], "hi", "m1", id="m1:reply")
    assert await bus.publish_outbound(reply)
    assert not await bus.publish_outbound(reply)
    await bus.mark_chunk_sent("m1:reply", 0)
    assert await bus.chunks_sent("m1:reply") == 1
    await bus.stop()


async def test_the_cluster_view_names_lease_holders_workers_and_backlog(redis_url: str) -> None:
    from bot.cluster.leases import Lease
    from bot.cluster.status import describe_cluster

    gateway = RedisBus(redis_url, consumer="gw")
    gateway.deliver_for(["telegram"])
    await gateway.start()
    lease = Lease(gateway.redis, gateway.key("lease", "channel", "telegram", "abc"), "gw", ttl=5)
    await lease.hold()
    log: dict[str, list[int]] = defaultdict(list)
    bus, worker, task = await start_worker(redis_url, "w1", log)
    worker.pause = 10.0
    await publish_burst(gateway, 2)
    await asyncio.wait_for(worker.busy.wait(), 5)
    lines = await describe_cluster(RedisBus(redis_url, consumer="status"))
    assert "lease channel:telegram:abc: held by gw" in lines[0]
    assert any(line.startswith("worker w1 on inbox: 2 messages in hand") for line in lines), lines
    assert "stream inbox: 2 in hand, 0 unread" in lines
    assert lines[-1].startswith("backlog: 2 messages pending")
    worker.kill()
    task.cancel()
    await bus.stop()
    await lease.release()
    await gateway.stop()


async def test_gateways_with_different_channels_each_deliver_only_their_own_replies(redis_url: str) -> None:
    from bot.cluster.status import describe_cluster

    telegram, discord = RedisBus(redis_url, consumer="gw-telegram"), RedisBus(redis_url, consumer="gw-discord")
    telegram.deliver_for(["telegram"])
    discord.deliver_for(["discord"])
    worker = RedisBus(redis_url, consumer="w")
    for chat in [ChatRef(name, str(n)) for name in ("telegram", "discord", "slack") for n in range(3)]:
        inbound = InboundMessage(chat, "u", chat.chat_id)
        await telegram.publish_inbound(inbound)
        reply = OutboundMessage(chat, f"re {chat.chat_id}", inbound.id, id=f"{inbound.id}:reply")
        assert await worker.publish_outbound(reply)
        assert not await worker.publish_outbound(reply)  # exactly once: a late duplicate is dropped
    got: dict[str, list[str]] = {}
    for gateway in (telegram, discord):
        async with asyncio.timeout(5):
            replies = [await gateway.consume_outbound() for _ in range(3)]
        for reply in replies:
            await gateway.mark_sent(reply.id)
        got[gateway.consumer] = sorted(reply.chat.channel for reply in replies)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await gateway.consume_outbound()
    assert got == {"gw-telegram": ["telegram"] * 3, "gw-discord": ["discord"] * 3}
    lines = await describe_cluster(RedisBus(redis_url, consumer="status"))
    assert "stream outbox:slack: 0 in hand, 3 unread" in lines  # nobody runs slack: its replies wait
    assert "stream outbox:telegram: 0 in hand, 0 unread" in lines
    assert (await worker.stats()).outbound_pending == 3
    for bus in (telegram, discord, worker):
        await bus.stop()
