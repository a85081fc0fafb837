"""Cron and the heartbeat on the redis bus: a shared job store, runs claimed once, outcomes from other processes."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.app.redis_stores import RedisStores
from bot.bus import ChatRef, OutboundMessage
from bot.bus.redis.bus import RedisBus
from bot.cancelling import cancel_and_wait
from bot.cluster.redis import RedisState
from bot.config.schema import HeartbeatConfig
from bot.events import EventBus
from bot.scheduler.cron import CronService
from bot.scheduler.heartbeat import HeartbeatService, Outcome
from bot.scheduler.outcomes import OutcomeRelay
from bot.scheduler.redis_cron import RunClaims
from bot.scheduler.schedules import Schedule
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cluster_node import OWNER, cluster_node
from tests.support.polling import until

CHAT = ChatRef("telegram", str(OWNER))
PREFIX = "t"


async def outbox_ids(state: RedisState) -> list[str]:
    entries = await state.aclient.xrange(state.key("outbox", CHAT.channel))
    return [fields["id"] for _, fields in entries]


async def test_a_run_claimed_by_a_dead_leader_is_published_once_by_the_next(
    tmp_path: Path, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    state = RedisState(redis_url, PREFIX)
    editor = CronService(tmp_path / "cli", "UTC", 600, shared=state)
    await editor.start(paused=True)
    due = (datetime.now(UTC) - timedelta(seconds=2)).replace(microsecond=0)
    unpublished = editor.add(Schedule("every", "1h", "UTC"), CHAT, "remind", "claimed only", next_run=due)
    published = editor.add(Schedule("every", "1h", "UTC"), CHAT, "remind", "claimed and sent", next_run=due)
    await editor.stop()
    # The dead leader claimed both runs, published one of them, and released neither.
    claims = RunClaims(state)
    for job in (unpublished, published):
        assert claims.claim(job.id, due, asdict(job.payload))
    old_bus = RedisBus(redis_url, prefix=PREFIX)
    sent_id = f"cron-{published.id}-{int(due.timestamp())}"
    assert await old_bus.publish_outbound(OutboundMessage(CHAT, "claimed and sent", kind="notice", id=sent_id))
    await old_bus.stop()

    bus = RedisBus(redis_url, prefix=PREFIX)
    leader = CronService(tmp_path / "b", "UTC", 600, bus=bus, shared=state)
    caplog.set_level(logging.INFO, logger="bot.scheduler.cron")
    await leader.start()

    async def published_both() -> bool:
        return len(await outbox_ids(state)) == 2 and not claims.pending()

    await until(published_both, 5.0)
    await until(lambda: caplog.text.count("was claimed by another process") == 2, 5.0)  # apscheduler's own runs
    assert sorted(await outbox_ids(state)) == sorted([sent_id, f"cron-{unpublished.id}-{int(due.timestamp())}"])
    assert all(job.next_run > datetime.now(UTC) for job in leader.jobs())
    assert caplog.text.count("was claimed by another process") == 2  # apscheduler's own runs of both: refused
    assert caplog.text.count("already journaled") == 1  # the catch-up of the published one: taken once by the bus
    await leader.stop()
    await bus.stop()
    await state.aclose()


@pytest.mark.slow
async def test_a_job_added_in_another_process_wakes_the_leader(tmp_path: Path, redis_url: str) -> None:
    state = RedisState(redis_url, PREFIX, timeout=0.2)  # the leader idles past the shared clients' socket timeout
    bus = RedisBus(redis_url, prefix=PREFIX)
    leader = CronService(tmp_path / "leader", "UTC", 600, bus=bus, shared=state)
    await leader.start()  # no jobs yet: apscheduler sleeps until told
    await asyncio.sleep(0.4)
    other = RedisState(redis_url, PREFIX, timeout=0.2)
    worker = CronService(tmp_path / "worker", "UTC", 600, shared=other)
    await worker.start(paused=True)
    at = (datetime.now(UTC) + timedelta(seconds=0.4)).isoformat()
    job = worker.add(Schedule("at", at, "UTC"), CHAT, "remind", "from a worker's cron tool")
    await worker.stop()

    async def fired() -> bool:
        return len(await outbox_ids(state)) == 1

    await until(fired, 3.0)
    (message_id,) = await outbox_ids(state)
    assert message_id.startswith(f"cron-{job.id}-")
    assert leader.jobs() == []  # a one-off is gone once it ran
    await leader.stop()
    await bus.stop()
    await other.aclose()
    await state.aclose()


async def test_a_heartbeat_records_the_outcome_of_a_turn_another_worker_ran(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    gateway = cluster_node(tmp_path / "g", fake_llm, telegram, redis_url, "gateway", PREFIX)
    worker = cluster_node(tmp_path / "w", fake_llm, telegram, redis_url, "worker", PREFIX)
    await gateway.start()
    await worker.start()
    # The scheduler side: it publishes beats and learns their outcome only through Redis.
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "HEARTBEAT.md").write_text("- [ ] water the plants\n")
    state = RedisState(redis_url, PREFIX)
    bus = RedisBus(redis_url, prefix=PREFIX)
    outcomes = EventBus()
    relay = OutcomeRelay(state, EventBus(), outcomes)
    await relay.start()
    config = HeartbeatConfig(enabled=True, deliver_to=f"telegram:{OWNER}")
    beats = HeartbeatService(
        config,
        tmp_path / "workspace",
        "UTC",
        lambda: gateway.agent.loop.last_owner_chat,
        gateway.agent.loop.is_busy,
        bus.publish_inbound,
        EventBus(),
        outcomes=outcomes,
    )
    try:
        fake_llm.script(Text("The plants need water."))
        assert await asyncio.wait_for(beats.tick(1000.0), 10) is Outcome.DELIVERED
        assert [s["text"] for s in await telegram.wait_for_sent(1)] == ["The plants need water."]
        fake_llm.script(Text("HEARTBEAT_OK"))
        assert await asyncio.wait_for(beats.tick(2000.0), 10) is Outcome.QUIET
    finally:
        await relay.stop()
        await bus.stop()
        await state.aclose()
        await worker.stop()
        await gateway.stop()


async def test_a_standby_waiting_for_its_leases_adds_jobs_to_the_shared_store(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    leader = cluster_node(tmp_path / "a", fake_llm, telegram, redis_url, "all", PREFIX)
    standby = cluster_node(tmp_path / "b", fake_llm, telegram, redis_url, "all", PREFIX)
    await leader.start()
    waiting = asyncio.create_task(standby.start())
    stores = leader.agent.stores
    assert isinstance(stores, RedisStores)
    state = stores.state

    async def both_read_the_inbox() -> bool:
        """The standby runs turns (it reads the inbox) while it waits for the leases."""
        return len(await state.aclient.xinfo_consumers(state.key("inbox"), "workers")) >= 2

    await until(both_read_the_inbox, 10)
    job = standby.cron.add(Schedule("every", "1d", "UTC"), CHAT, "remind", "added by a turn on the standby")
    assert [info.id for info in leader.cron.jobs()] == [job.id]
    assert not waiting.done()
    await cancel_and_wait(waiting)  # a redis call inside may swallow one cancel (Python 3.11's wait_for)
    await standby.stop()
    await leader.stop()
