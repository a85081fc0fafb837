"""A message's origin survives the SQLite journal and the Redis stream; rows from before it existed read as user."""

from __future__ import annotations

import json
from pathlib import Path

from bot.bus import ChatRef, InboundMessage, LocalBus, Trust
from bot.bus.journal import Journal
from bot.bus.messages import inbound_to_json
from bot.bus.redis.bus import RedisBus

CHAT = ChatRef("telegram", "42")
BEAT = InboundMessage(CHAT, "heartbeat", "- check the backups", Trust.OWNER, kind="system", origin="heartbeat")


async def test_a_pending_heartbeat_comes_back_after_a_restart_as_a_heartbeat(tmp_path: Path) -> None:
    bus = LocalBus(tmp_path / "j.db")
    await bus.start()
    assert await bus.publish_inbound(BEAT)
    again = LocalBus(tmp_path / "j.db")  # no stop: the process died
    await again.start()
    assert await again.consume_inbound() == BEAT
    await again.stop()


def test_a_journal_row_from_before_origin_existed_runs_as_a_user_message(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.db")
    journal.open()
    old = json.loads(inbound_to_json(InboundMessage(CHAT, "42", "hi")))
    del old["origin"]
    journal.db.execute("INSERT INTO inbox (id, body, updated) VALUES (?, ?, 0)", (old["id"], json.dumps(old)))
    (pending,), _ = journal.pending_inbound()
    journal.close()
    assert (pending.text, pending.origin) == ("hi", "user")


async def test_a_cron_message_crosses_the_redis_stream_with_its_origin(redis_url: str) -> None:
    job = InboundMessage(CHAT, "cron", "[scheduled job j1] report", Trust.USER, kind="system", origin="cron")
    bus = RedisBus(redis_url, consumer="solo", block=0.02)
    await bus.start()
    try:
        assert await bus.publish_inbound(job)
        assert await bus.consume_inbound() == job
    finally:
        await bus.stop()
