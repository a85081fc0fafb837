from pathlib import Path

import pytest

from bot.bus import ChatRef, InboundMessage, LocalBus, OutboundMessage
from bot.bus.dead_letters import CRASH_APOLOGY
from bot.errors import BusClosed

CHAT = ChatRef("telegram", "42")


def message(text: str, platform_id: str | None = None, chat: ChatRef = CHAT) -> InboundMessage:
    return InboundMessage(chat, "42", text, platform_message_id=platform_id)


async def restarted(path: Path) -> LocalBus:
    bus = LocalBus(path)
    await bus.start()
    return bus


async def drain_inbound(bus: LocalBus, n: int) -> list[str]:
    return [(await bus.consume_inbound()).text for _ in range(n)]


async def test_pending_messages_come_back_after_a_restart_in_their_order(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    for text in ("a", "b", "c"):
        await bus.publish_inbound(message(text))
    first = await bus.consume_inbound()
    await bus.publish_outbound(OutboundMessage(CHAT, "answer to a", first.id), completes=[first.id])
    # no stop: the process died
    again = await restarted(tmp_path / "j.db")
    assert await drain_inbound(again, 2) == ["b", "c"]
    assert again._inbound.empty()
    assert (await again.consume_outbound()).text == "answer to a"


async def test_a_redelivered_platform_message_is_accepted_once_even_across_restarts(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    assert await bus.publish_inbound(message("hi", "7"))
    assert not await bus.publish_inbound(message("hi", "7"))
    again = await restarted(tmp_path / "j.db")
    assert not await again.publish_inbound(message("hi", "7"))
    assert await again.publish_inbound(message("hi", "7", ChatRef("telegram", "43")))


async def test_a_message_that_crashed_the_process_twice_fails_with_one_apology(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    poison = message("poison", "1")
    await bus.publish_inbound(poison)
    for _ in range(2):
        await bus.begin_inbound([(await bus.consume_inbound()).id])
        bus = await restarted(tmp_path / "j.db")
    apology = await bus.consume_outbound()
    assert (apology.text, apology.kind, apology.in_reply_to) == (CRASH_APOLOGY, "error", poison.id)
    assert bus._inbound.empty()
    stats = await (await restarted(tmp_path / "j.db")).stats()
    assert (stats.inbound_failed, stats.inbound_pending) == (1, 0)


async def test_a_turn_released_at_a_graceful_stop_does_not_count_as_a_crash(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    await bus.publish_inbound(message("long"))
    for _ in range(3):
        taken = await bus.consume_inbound()
        await bus.begin_inbound([taken.id])
        await bus.release_inbound([taken.id])
        await bus.stop()
        bus = await restarted(tmp_path / "j.db")
    assert (await bus.consume_inbound()).text == "long"


async def test_an_unsent_reply_resumes_after_its_last_confirmed_chunk(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    reply = OutboundMessage(CHAT, "long reply", id="r1")
    await bus.publish_outbound(reply)
    await bus.publish_outbound(reply)  # the same id twice is journaled once
    await bus.mark_chunk_sent("r1", 0)
    await bus.mark_chunk_sent("r1", 1)
    again = await restarted(tmp_path / "j.db")
    assert await again.consume_outbound() == reply
    assert again._outbound.empty()
    assert await again.chunks_sent("r1") == 2
    await again.mark_sent("r1")
    assert (await restarted(tmp_path / "j.db"))._outbound.empty()


async def test_a_closed_intake_refuses_messages(tmp_path: Path) -> None:
    bus = await restarted(tmp_path / "j.db")
    bus.close_intake()
    with pytest.raises(BusClosed):
        await bus.publish_inbound(message("late"))
    assert (await bus.stats()).inbound_pending == 0


async def test_status_shows_pending_work_and_ambiguous_sends(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from bot.cli.main import app
    from tests.support.cli_process import env_for

    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/x\n")
    bus = await restarted(tmp_path / "state" / "journal.db")
    await bus.publish_inbound(message("waiting"))
    await bus.publish_outbound(OutboundMessage(CHAT, "maybe twice", id="r1"))
    await bus.count_ambiguous("r1")
    await bus.stop()
    result = CliRunner().invoke(app, ["status"], env=env_for(tmp_path))
    assert result.exit_code == 0, result.output
    assert "delivery:  1 messages pending, 0 failed; 1 replies unsent, 0 undeliverable; 1 ambiguous sends" in (
        result.output
    )
