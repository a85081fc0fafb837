"""Shared state across roles on the redis bus: a session's next turn on another worker, the owner DM, the heartbeat."""

from __future__ import annotations

from pathlib import Path

from bot.bus import ChatRef
from bot.llm.transports.litellm_loader import import_litellm
from bot.scheduler.heartbeat import Outcome
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cluster_node import OWNER, cluster_node

import_litellm()  # at collection: a first import during a test would compete with the leases' renewal


def said(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] in ("user", "assistant")]


async def test_a_second_message_answered_by_another_worker_sees_the_first_exchange(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    gateway = cluster_node(tmp_path / "g", fake_llm, telegram, redis_url, "gateway")
    first = cluster_node(tmp_path / "a", fake_llm, telegram, redis_url, "worker")
    await gateway.start()
    await first.start()
    fake_llm.script(Text("Noted: your cat is called Miso."))
    telegram.text("My cat is called Miso.", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(1)
    await first.stop()

    second = cluster_node(tmp_path / "b", fake_llm, telegram, redis_url, "worker")
    await second.start()
    assert second.agent.loop.last_owner_chat == ChatRef("telegram", str(OWNER))  # noted by the first worker
    fake_llm.script(Text("Miso."))
    telegram.text("What is my cat called?", chat_id=OWNER, user_id=OWNER)
    sent = await telegram.wait_for_sent(2)
    assert sent[-1]["text"] == "Miso."
    asked, answered, now = said(fake_llm.requests[-1])[-3:]
    assert asked.endswith("\nMy cat is called Miso.") and answered == "Noted: your cat is called Miso."
    assert now.endswith("\nWhat is my cat called?")
    assert not any((tmp_path / name / "state" / "sessions").exists() for name in "gab")  # no session files
    web_history = gateway.agent.sessions.recent(f"telegram:{OWNER}", 10)
    assert [m["content"] for m in web_history][-1] == "Miso."
    await second.stop()
    await gateway.stop()


async def test_the_heartbeat_run_by_the_scheduler_leader_shows_in_every_process(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    gateway = cluster_node(tmp_path / "g", fake_llm, telegram, redis_url, "gateway")
    worker = cluster_node(tmp_path / "w", fake_llm, telegram, redis_url, "worker")
    assert gateway.heartbeat.last_run is None
    assert await worker.heartbeat.tick() is Outcome.NOTHING_TO_DO
    assert gateway.heartbeat.last_outcome is Outcome.NOTHING_TO_DO and gateway.heartbeat.last_run is not None
    await worker.agent.stop()
    await gateway.agent.stop()
