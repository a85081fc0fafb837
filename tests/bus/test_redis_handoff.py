"""A message for a session whose turn runs on another worker reaches that turn: /stop, /approve and steering."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.app.agent_wiring import AgentApp
from bot.app.rosters import answering
from bot.bus import ChatRef, InboundMessage, Trust
from bot.bus.messages import inbound_to_json
from bot.bus.redis.bus import RedisBus
from bot.bus.redis.handoff import ReadEntry, read_entries
from bot.bus.redis.inbox import WORKERS
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM, Hang, Text, ToolCalls
from tests.support.harness import RepliesCollector, make_config
from tests.support.polling import until

CHAT = ChatRef("test", "1")
TIMING: dict[str, float] = {"lease": 2.0, "claim_idle": 3.0, "block": 0.02}


class PausableBus(RedisBus):
    """A worker's bus whose inbox reader can be held between rounds, so a new entry goes to the other worker."""

    def __init__(self, *args: Any, paused: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.paused = paused
        self.at_gate = asyncio.Event()
        self.resumed = asyncio.Event()
        read_round = self._inbox.read_round

        async def gated_round(fresh: bool) -> None:
            if self.paused:
                self.at_gate.set()
                await self.resumed.wait()
            await read_round(fresh)

        self._inbox.read_round = gated_round

    async def pause(self) -> None:
        self.resumed.clear()
        self.at_gate.clear()
        self.paused = True
        await asyncio.wait_for(self.at_gate.wait(), 5)

    def resume(self) -> None:
        self.paused = False
        self.resumed.set()


class Cluster(RepliesCollector):
    """A gateway bus and two agent workers, A and B, sharing one Redis and one workspace."""

    def __init__(self, tmp_path: Path, fake: FakeLLM, url: str, **overrides: Any) -> None:
        self.tmp_path, self.fake, self.url, self.overrides = tmp_path, fake, url, overrides
        self.gateway = RedisBus(url, consumer="gateway", **TIMING)
        self.a_bus = PausableBus(url, consumer="worker-a", **TIMING)
        self.a = self._worker("a", self.a_bus)
        self.b_bus = PausableBus(url, consumer="worker-b", paused=True, **TIMING)  # reads nothing until needed
        self.b = self._worker("b", self.b_bus)
        self._start_collecting()
        self._collector: asyncio.Task[None] | None = None
        self._stack = AsyncExitStack()  # each worker with its roster of one

    def _worker(self, name: str, bus: RedisBus) -> AgentApp:
        config = make_config(
            self.tmp_path,
            self.fake,
            state_dir=self.tmp_path / name / "state",
            bus={"backend": "redis", "url": self.url},
            **self.overrides,
        )
        retry = RetryPolicy(attempts=2, base_delay=0.0)
        return AgentApp(config, ModelProvider(config.llm, retry), bus=bus, retry=retry)

    async def start(self) -> None:
        await self.gateway.start()
        self._collector = asyncio.create_task(self._collect())
        for worker in (self.a, self.b):
            await self._stack.enter_async_context(answering(worker))

    async def stop(self) -> None:
        self.a_bus.resume()
        self.b_bus.resume()
        if self._collector:
            self._collector.cancel()
            await asyncio.gather(self._collector, return_exceptions=True)
        await self._stack.aclose()
        await self.gateway.stop()

    async def send(self, text: str) -> InboundMessage:
        message = InboundMessage(CHAT, sender_id="u1", text=text, trust=Trust.OWNER)
        await self.gateway.publish_inbound(message)
        return message

    async def send_to_b(self, text: str) -> InboundMessage:
        """Publish while A's reader is held, so B reads the entry (A's turn keeps running meanwhile)."""
        await self.a_bus.pause()
        self.b_bus.resume()
        message = await self.send(text)
        await self._read_by_someone()
        self.a_bus.resume()
        return message

    async def _read_by_someone(self) -> None:
        async def read() -> bool:
            return not (await self.gateway.backlog())[0].unread

        await until(read, 5, interval=0.01)

    async def _collect(self) -> None:
        while True:
            message = await self.gateway.consume_outbound()
            await self.gateway.mark_sent(message.id)
            await self._arrive(message)


@pytest_asyncio.fixture
async def cluster_factory(tmp_path: Path, redis_url: str) -> AsyncIterator[Any]:
    started: list[Cluster] = []

    async def make(fake: FakeLLM, **overrides: Any) -> Cluster:
        cluster = Cluster(tmp_path, fake, redis_url, **overrides)
        started.append(cluster)
        await cluster.start()
        return cluster

    yield make
    for cluster in started:
        await cluster.stop()


async def turn_holder(bus: RedisBus) -> str | None:
    return await bus.redis.get(bus.key("lock", CHAT.session_key))


async def test_stop_reaches_the_turn_running_on_another_worker(fake_llm: FakeLLM, cluster_factory: Any) -> None:
    fake_llm.script(Hang())
    cluster = await cluster_factory(fake_llm, agent={"turn_timeout": "30s"})
    work = await cluster.send("do something long")
    await fake_llm.wait_for_requests(1)
    assert await turn_holder(cluster.gateway) == "worker-a"
    stop = await cluster.send_to_b("/stop")
    assert (await cluster.reply_to(stop)).text == "Stopped."
    assert not [out for out in cluster.outbox if out.in_reply_to == work.id]
    pending = await cluster.gateway.redis.xpending(cluster.gateway.key("inbox"), WORKERS)
    assert pending["pending"] == 0


async def test_approve_reaches_the_tool_call_waiting_on_another_worker(
    fake_llm: FakeLLM, cluster_factory: Any, tmp_path: Path
) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "junk").mkdir()
    fake_llm.script(ToolCalls((("exec", {"command": "rm -r junk"}),)), Text("Done."))
    cluster = await cluster_factory(fake_llm, tools={"exec": {"sandbox": "off", "approval_timeout": "30s"}})
    work = await cluster.send("clean up junk")
    prompt = await cluster.wait_for(lambda out: "/approve" in out.text, timeout=30)
    code = re.fullmatch(r"Run `rm -r junk`\? Reply /approve (\w{3}) or /deny \1", prompt.text)
    assert code, prompt.text
    approve = await cluster.send_to_b(f"/approve {code.group(1)}")
    assert (await cluster.reply_to(approve)).text == "Approved: `rm -r junk`."
    assert (await cluster.reply_to(work)).text == "Done."
    assert not (tmp_path / "workspace" / "junk").exists()


async def test_a_message_steered_from_another_worker_joins_the_running_turn(cluster_factory: Any) -> None:
    async with FakeLLM() as fake:
        fake.script(ToolCalls((("list_dir", {}),), latency=1.0), Text("Using the other folder."))
        cluster = await cluster_factory(fake, agent={"queue_mode": "steer"})
        first = await cluster.send("list the files")
        await fake.wait_for_requests(1)
        steered = await cluster.send_to_b("actually, the other folder")
        assert (await cluster.reply_to(first)).text == "Using the other folder."
        barrier = await cluster.send("barrier")  # the session's next turn: a turn of the steered message came first
        await cluster.reply_to(barrier)
        assert len(fake.requests) == 3 and fake.requests[2]["messages"][-1]["content"].endswith("barrier")
        assert fake.requests[1]["messages"][-1]["content"].endswith("actually, the other folder")
        assert not [out for out in cluster.outbox if out.in_reply_to == steered.id]


async def pending_of(bus: RedisBus, consumer: str) -> int:
    rows = await bus.redis.xpending_range(bus.key("inbox"), WORKERS, "-", "+", 100, consumername=consumer)
    return len(rows)


async def until_pending(bus: RedisBus, consumer: str, count: int) -> None:
    async def reached() -> bool:
        return await pending_of(bus, consumer) == count

    await until(reached, 5, interval=0.01)


async def test_an_entry_handed_over_as_the_holder_finishes_its_turn_still_runs_on_the_holder(redis_url: str) -> None:
    gateway = RedisBus(redis_url, consumer="gateway", **TIMING)
    holder = PausableBus(redis_url, consumer="holder", **TIMING)
    other = RedisBus(redis_url, consumer="other", **TIMING)
    first = InboundMessage(CHAT, sender_id="u1", text="1")
    await gateway.publish_inbound(first)
    assert (await asyncio.wait_for(holder.consume_inbound(), 5)).id == first.id
    await holder.pause()
    reading = asyncio.create_task(other.consume_inbound())
    second = InboundMessage(CHAT, sender_id="u1", text="2")
    await gateway.publish_inbound(second)
    await until_pending(gateway, "holder", 2)  # handed over: the holder owns it in the pending list
    await holder.complete_inbound([first.id])  # the turn ends (its lock goes) before the holder reads the handoff
    holder.resume()
    assert (await asyncio.wait_for(holder.consume_inbound(), 5)).id == second.id
    assert not reading.done() and await pending_of(gateway, "other") == 0
    reading.cancel()
    for bus in (other, holder, gateway):
        await bus.stop()


async def test_an_entry_handed_to_a_worker_that_dies_is_claimed_and_run_after_its_turn(redis_url: str) -> None:
    timing = {"lease": 1.0, "claim_idle": 0.5, "block": 0.02}
    gateway = RedisBus(redis_url, consumer="gateway", **timing)
    doomed = PausableBus(redis_url, consumer="doomed", **timing)
    survivor = RedisBus(redis_url, consumer="survivor", **timing)
    first = InboundMessage(CHAT, sender_id="u1", text="1")
    await gateway.publish_inbound(first)
    assert (await asyncio.wait_for(doomed.consume_inbound(), 5)).id == first.id
    await doomed.pause()  # like a SIGKILL: it renews nothing, reads nothing, and its lock and handoff stream stay
    second = InboundMessage(CHAT, sender_id="u1", text="2")
    await gateway.publish_inbound(second)
    reading = asyncio.create_task(survivor.consume_inbound())
    await until_pending(gateway, "doomed", 2)
    assert (await asyncio.wait_for(reading, 5)).id == first.id
    assert (await asyncio.wait_for(survivor.consume_inbound(), 5)).id == second.id
    doomed.resume()
    for bus in (survivor, doomed, gateway):
        await bus.stop()


def test_a_read_yields_inbox_entries_and_handed_entries_by_the_inbox_id_they_name() -> None:
    message = InboundMessage(CHAT, sender_id="u1", text="hi")
    body = {"session": CHAT.session_key, "body": inbound_to_json(message)}
    response = [
        ["p:inbox", [("1-0", body), ("2-0", None)]],
        ["p:handoff:a", [("9-0", {"entry": "3-0", "claimed": "1", **body})]],
    ]
    read, announced = read_entries(response, "p:inbox")
    assert read == [ReadEntry("1-0", CHAT.session_key, message), ReadEntry("3-0", CHAT.session_key, message, True)]
    assert announced == ["9-0"]
