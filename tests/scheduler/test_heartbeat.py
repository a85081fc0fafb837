import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.bus import ChatRef, InboundMessage
from bot.config.schema import HeartbeatConfig
from bot.events import EventBus, HeartbeatTicked
from bot.scheduler.heartbeat import HeartbeatService, Outcome, actionable, within_hours
from bot.scheduler.heartbeat_ack import strip_ack
from bot.setup.home import bundled
from tests.fakes.openai_server import Error, FakeLLM, Hang, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot


def test_the_shipped_template_has_nothing_to_act_on() -> None:
    assert not actionable(bundled("workspace-template/HEARTBEAT.md").read_text())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# Tasks\n\n<!-- - check mail -->\n- [ ]\n", False),
        ("## Done\n- [x] renewed the domain\n", False),
        ("# Tasks\n- [ ] check the build status\n", True),
        ("Look at the weather and warn me about rain.", True),
    ],
)
def test_actionable(text: str, expected: bool) -> None:
    assert actionable(text) is expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("HEARTBEAT_OK", None),
        ("  **HEARTBEAT_OK**. ", None),
        ("HEARTBEAT_OK - all quiet", None),
        ("Nothing new. HEARTBEAT_OK", None),
        (
            "The build is red since 14:02: three tests fail in the payments module, see CI.",
            "The build is red since 14:02: three tests fail in the payments module, see CI.",
        ),
    ],
)
def test_strip_ack(reply: str, expected: str | None) -> None:
    assert strip_ack(reply) == expected


def test_active_hours_including_a_window_past_midnight() -> None:
    assert within_hours("08:00-22:00", datetime(2026, 1, 1, 8, 0))
    assert not within_hours("08:00-22:00", datetime(2026, 1, 1, 22, 0))
    assert within_hours("22:00-06:00", datetime(2026, 1, 1, 23, 30))
    assert not within_hours("22:00-06:00", datetime(2026, 1, 1, 12, 0))
    assert within_hours(None, datetime(2026, 1, 1, 3, 0))


class JournaledBus:
    """Takes the heartbeat's messages as if each beat had been journaled before: the beat ends at publish."""

    def __init__(self) -> None:
        self.published: list[InboundMessage] = []

    async def publish_inbound(self, message: InboundMessage) -> bool:
        self.published.append(message)
        return False


def standalone(
    tmp_path: Path, bus: JournaledBus, owner_chat: ChatRef | None, busy: frozenset[str] = frozenset()
) -> HeartbeatService:
    (tmp_path / "HEARTBEAT.md").write_text("- check the backups")
    config = HeartbeatConfig()
    return HeartbeatService(
        config, tmp_path, "UTC", lambda: owner_chat, busy.__contains__, bus.publish_inbound, EventBus()
    )


async def test_without_deliver_to_the_beat_goes_to_the_chat_the_callable_names(tmp_path: Path) -> None:
    bus = JournaledBus()
    heartbeat = standalone(tmp_path, bus, ChatRef("telegram", "7"))
    assert await heartbeat.tick() is Outcome.ALREADY_RAN
    (beat,) = bus.published
    assert (beat.chat, beat.kind, beat.origin) == (ChatRef("telegram", "7"), "system", "heartbeat")
    assert "check the backups" in beat.text


async def test_no_owner_chat_from_the_callable_means_no_target(tmp_path: Path) -> None:
    bus = JournaledBus()
    assert await standalone(tmp_path, bus, None).tick() is Outcome.NO_TARGET
    assert bus.published == []


async def test_every_tick_is_an_event_with_its_outcome(tmp_path: Path) -> None:
    events, ticks = EventBus(), []
    events.subscribe(ticks.append, HeartbeatTicked)
    (tmp_path / "HEARTBEAT.md").write_text("- check the backups")
    heartbeat = HeartbeatService(
        HeartbeatConfig(), tmp_path, "UTC", lambda: None, bool, JournaledBus().publish_inbound, events
    )
    await heartbeat.tick()
    assert ticks == [HeartbeatTicked(Outcome.NO_TARGET.value)]


async def test_a_chat_the_callable_calls_busy_is_skipped(tmp_path: Path) -> None:
    bus = JournaledBus()
    heartbeat = standalone(tmp_path, bus, ChatRef("telegram", "7"), busy=frozenset({"telegram:7"}))
    assert await heartbeat.tick() is Outcome.BUSY
    assert bus.published == []


def with_tasks(bot: TelegramBot, tasks: str) -> TelegramBot:
    """`bot` with `tasks` as its workspace's HEARTBEAT.md."""
    bot.config.workspace.mkdir(parents=True, exist_ok=True)
    (bot.config.workspace / "HEARTBEAT.md").write_text(tasks)
    return bot


def heartbeat_bot(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, tasks: str, **heartbeat: object
) -> TelegramBot:
    bot = TelegramBot(tmp_path, fake_llm, telegram, heartbeat={"deliver_to": f"telegram:{OWNER}", **heartbeat})
    return with_tasks(bot, tasks)


async def test_empty_file_makes_no_request(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "# Tasks\n- [ ]\n") as bot:
        assert await bot.gateway.heartbeat.tick() is Outcome.NOTHING_TO_DO
    assert fake_llm.requests == []


async def test_heartbeat_ok_delivers_nothing_and_the_beat_joins_the_target_chat(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("HEARTBEAT_OK"))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        assert await bot.gateway.heartbeat.tick() is Outcome.QUIET
        session = bot.gateway.agent.sessions.get(f"telegram:{OWNER}")
    assert telegram.sent == []
    assert "check the backups" in fake_llm.requests[0]["messages"][-1]["content"]
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert "check the backups" in session.messages[0]["content"] and session.messages[1]["content"] == "HEARTBEAT_OK"


async def test_other_replies_are_delivered_without_the_ack(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("HEARTBEAT_OK\n\nThe nightly backup failed at 03:00; the disk on the NAS is full."))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        await bot.gateway.manager.ready("telegram")
        assert await bot.gateway.heartbeat.tick() is Outcome.DELIVERED
        (sent,) = await telegram.wait_for_sent(1)
    assert sent["chat_id"] == OWNER and sent["text"].startswith("The nightly backup failed")
    system_prompt = fake_llm.requests[0]["messages"][0]["content"]
    assert "MEMORY.md" in system_prompt


async def test_a_reply_the_platform_refuses_is_a_failed_beat(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("The nightly backup failed at 03:00; the disk is full."))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.fail("sendMessage", status=400, description="Bad Request: chat not found")
        assert await bot.gateway.heartbeat.tick() is Outcome.FAILED
        (notice,) = await telegram.wait_for_sent(1)  # the beat's reply is a dead letter, and the owner hears of it
    assert notice["text"].startswith("1 reply could not be delivered")


async def test_a_beat_fired_again_for_the_same_due_time_runs_once(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("The nightly backup failed at 03:00; the disk is full."))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        await bot.gateway.manager.ready("telegram")
        assert await bot.gateway.heartbeat.tick(due=1_800_000.0) is Outcome.DELIVERED
        assert await bot.gateway.heartbeat.tick(due=1_800_000.0) is Outcome.ALREADY_RAN
        await telegram.wait_for_sent(1)
    assert len(fake_llm.requests) == 1 and len(telegram.sent) == 1


async def test_a_beat_cut_short_by_a_stop_runs_again_at_the_next_start(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Hang())
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as first:
        beat = asyncio.create_task(first.gateway.heartbeat.tick())
        await fake_llm.wait_for_requests(1)
    assert await beat is Outcome.FAILED
    fake_llm.script(Text("The nightly backup failed at 03:00; the disk is full."))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups"):
        (sent,) = await telegram.wait_for_sent(1)
    assert sent["chat_id"] == OWNER and "disk is full" in sent["text"]
    assert "check the backups" in fake_llm.requests[1]["messages"][-1]["content"]


async def test_without_deliver_to_the_latest_owner_chat_is_used(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    bot = with_tasks(TelegramBot(tmp_path, fake_llm, telegram), "- anything new?")
    async with bot:
        await bot.gateway.manager.ready("telegram")
        assert await bot.gateway.heartbeat.tick() is Outcome.NO_TARGET
        telegram.text("hi", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        fake_llm.script(Text("A new invoice arrived from ACME, due Friday, amount 1,200 EUR."))
        assert await bot.gateway.heartbeat.tick() is Outcome.DELIVERED
        sent = await telegram.wait_for_sent(2)
    assert sent[1]["chat_id"] == OWNER and "ACME" in sent[1]["text"]


async def test_skipped_while_the_target_chat_is_mid_turn(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Hang())
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check things") as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.text("long question", chat_id=OWNER, user_id=OWNER)
        await fake_llm.wait_for_requests(1)
        assert await bot.gateway.heartbeat.tick() is Outcome.BUSY
    assert len(fake_llm.requests) == 1


async def test_outside_active_hours_nothing_runs(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    hour = datetime.now(UTC).hour
    window = f"{(hour + 2) % 24:02d}:00-{(hour + 3) % 24:02d}:00"
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check things", active_hours=window) as bot:
        assert await bot.gateway.heartbeat.tick() is Outcome.OFF_HOURS
    assert fake_llm.requests == []


async def test_runs_on_its_interval(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    fake_llm.script(Text("Reminder: the certificate expires tomorrow, renew it today."))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- watch the certificate", interval="200ms"):
        (sent,) = await telegram.wait_for_sent(1)
    assert "certificate expires tomorrow" in sent["text"]


async def test_without_deliver_to_only_an_owner_dm_is_used_and_remembered(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    group = -1001
    caplog.set_level(logging.INFO, "bot.scheduler.heartbeat")

    def bot() -> TelegramBot:
        made = TelegramBot(tmp_path, fake_llm, telegram, telegram_options={"group_policy": "open"})
        return with_tasks(made, "- anything new?")

    async with bot() as first:
        await first.gateway.manager.ready("telegram")
        telegram.text("hi all", chat_id=group, user_id=OWNER, chat_type="group")
        await telegram.wait_for_sent(1)
        caplog.clear()
        assert await first.gateway.heartbeat.tick() is Outcome.NO_TARGET
        assert [r.getMessage() for r in caplog.records if r.name == "bot.scheduler.heartbeat"] == [
            "heartbeat: skipped: no deliver_to and no owner has written in a direct chat yet"
        ]
        telegram.text("hi", chat_id=OWNER, user_id=OWNER)
        telegram.text("and in the group again", chat_id=group, user_id=OWNER, chat_type="group")
        await telegram.wait_for_sent(3)
    remembered = first.config.state_dir / "owner_dm.json"
    assert remembered.stat().st_mode & 0o777 == 0o600
    fake_llm.script(Text("A new invoice arrived from ACME, due Friday, amount 1,200 EUR."))
    async with bot() as second:
        await second.gateway.manager.ready("telegram")
        assert await second.gateway.heartbeat.tick() is Outcome.DELIVERED
        sent = await telegram.wait_for_sent(4)
    assert sent[3]["chat_id"] == OWNER and "ACME" in sent[3]["text"]


async def test_a_heartbeat_turn_is_bounded_by_the_turn_timeout(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Hang())
    bot = TelegramBot(
        tmp_path, fake_llm, telegram, heartbeat={"deliver_to": f"telegram:{OWNER}"}, agent={"turn_timeout": "200ms"}
    )
    async with with_tasks(bot, "- check things"):
        assert await bot.gateway.heartbeat.tick() is Outcome.FAILED
    assert telegram.sent == []


async def test_three_refused_keys_in_a_row_pause_the_heartbeat_until_a_model_call_succeeds(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "bot.scheduler.heartbeat")
    fake_llm.script(Error(401), Error(403), Error(401))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        heartbeat = bot.gateway.heartbeat
        assert [await heartbeat.tick(due) for due in (1.0, 2.0, 3.0)] == [Outcome.KEY_REFUSED] * 3
        asked = len(fake_llm.requests)
        assert await heartbeat.tick(4.0) is Outcome.KEY_PAUSED
        assert len(fake_llm.requests) == asked
        errors = [
            r.getMessage() for r in caplog.records if r.name == "bot.scheduler.heartbeat" and r.levelno >= logging.ERROR
        ]
        assert len(errors) == 1 and "refused the API key 3 times in a row" in errors[0]
        fake_llm.script(Text("Hello!"), Text("HEARTBEAT_OK"))
        await bot.gateway.manager.ready("telegram")
        telegram.text("hi", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        assert await heartbeat.tick(5.0) is Outcome.QUIET
    assert telegram.sent[0]["text"] == "Hello!"


async def test_refusals_count_only_in_a_row(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    fake_llm.script(Error(401), Error(401), Text("HEARTBEAT_OK"), Error(401), Error(401))
    async with heartbeat_bot(tmp_path, fake_llm, telegram, "- check the backups") as bot:
        outcomes = [await bot.gateway.heartbeat.tick(float(due)) for due in range(5)]
        assert not bot.gateway.heartbeat.paused_for_key
    assert outcomes == [Outcome.KEY_REFUSED] * 2 + [Outcome.QUIET] + [Outcome.KEY_REFUSED] * 2
