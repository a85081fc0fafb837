import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.bus import ChatRef
from bot.cli.main import app
from bot.events import CronRan, CronSkipped
from bot.scheduler.cron import CronService
from bot.scheduler.schedules import Schedule, ScheduleError
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot
from tests.support.harness import next_event

OWNER_CHAT = ChatRef("telegram", str(OWNER))


def soon(seconds: float = 1.0) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


async def offline_service(state_dir: Path) -> CronService:
    service = CronService(state_dir, "UTC", misfire_grace=600)
    await service.start(paused=True)
    return service


async def test_jobs_survive_a_restart(tmp_path: Path) -> None:
    first = await offline_service(tmp_path)
    added = first.add(
        Schedule("cron", "0 8 * * *", "Europe/Berlin"), OWNER_CHAT, "message", "Morning briefing", "daily"
    )
    await first.stop()
    second = await offline_service(tmp_path)
    (job,) = second.jobs()
    await second.stop()
    assert (job.id, job.name, job.payload.text, job.payload.target) == (
        added.id,
        "daily",
        "Morning briefing",
        "telegram:42",
    )
    assert job.next_run.hour == 8 and str(job.next_run.tzinfo) == "Europe/Berlin"


@pytest.mark.parametrize(
    ("schedule", "problem"),
    [
        (Schedule("cron", "61 * * * *", "UTC"), "not a valid cron expression"),
        (Schedule("cron", "every day", "UTC"), "5-field"),
        (Schedule("cron", "0 8 * * *", "Mars/Olympus"), "unknown timezone"),
        (Schedule("every", "often", "UTC"), "not a duration"),
        (Schedule("at", "2020-01-01T00:00", "UTC"), "in the past"),
        (Schedule("at", "tomorrow", "UTC"), "ISO date-time"),
    ],
)
async def test_invalid_schedules_are_rejected(tmp_path: Path, schedule: Schedule, problem: str) -> None:
    service = await offline_service(tmp_path)
    with pytest.raises(ScheduleError, match=problem):
        service.add(schedule, OWNER_CHAT, "remind", "x")
    await service.stop()


async def test_reminder_is_delivered_as_is_without_the_model(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await bot.gateway.manager.ready("telegram")
        bot.gateway.cron.add(Schedule("at", soon(), "UTC"), OWNER_CHAT, "remind", "Take the *pills*, 2 < 3")
        ran = await next_event(bot.gateway.agent.events, CronRan)
        (sent,) = await telegram.wait_for_sent(1)
    assert ran.ok and ran.delivered
    assert sent["chat_id"] == OWNER and sent["text"] == "Take the <i>pills</i>, 2 &lt; 3"
    assert fake_llm.requests == []


async def test_message_job_runs_a_turn_and_its_reply_reaches_the_chat(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    fake_llm.script(Text("Here is your briefing."))
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await bot.gateway.manager.ready("telegram")
        job = bot.gateway.cron.add(Schedule("at", soon(), "UTC"), OWNER_CHAT, "message", "Summarise my day")
        ran = await next_event(bot.gateway.agent.events, CronRan)
        (sent,) = await telegram.wait_for_sent(1)
        purposes = [call.purpose for call in bot.gateway.agent.ledger.calls()]
    assert purposes == ["cron"]
    assert sent["text"] == "Here is your briefing."
    assert "Summarise my day" in fake_llm.requests[0]["messages"][-1]["content"]
    assert ran.job_id == job.id and ran.ok and ran.delivered


async def test_every_fires_repeatedly(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await bot.gateway.manager.ready("telegram")
        bot.gateway.cron.add(Schedule("every", "1s", "UTC"), OWNER_CHAT, "remind", "tick")
        sent = await telegram.wait_for_sent(2, timeout=10)
    assert [s["text"] for s in sent] == ["tick", "tick"]


async def test_missed_run_inside_the_grace_runs_once_at_start(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    bot = TelegramBot(tmp_path, fake_llm, telegram)
    offline = await offline_service(bot.config.state_dir)
    five_minutes_ago = datetime.now(UTC) - timedelta(minutes=5)
    offline.add(Schedule("every", "1h", "UTC"), OWNER_CHAT, "remind", "missed but in grace", next_run=five_minutes_ago)
    await offline.stop()
    async with bot:
        (sent,) = await telegram.wait_for_sent(1)
    due = five_minutes_ago.strftime("%H:%M")
    assert sent["text"] == f"missed but in grace\n\n(Late: this reminder was due at {due} on " + (
        f"{five_minutes_ago:%b %d}, while I was offline.)"
    )


async def test_a_scheduled_run_fired_again_is_delivered_once(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await bot.gateway.manager.ready("telegram")
        job = bot.gateway.cron.add(Schedule("every", "1h", "UTC"), OWNER_CHAT, "remind", "once")
        (info,) = bot.gateway.cron.jobs()
        first = await bot.gateway.cron.fire(job.id, info.payload, info.next_run)
        again = await bot.gateway.cron.fire(job.id, info.payload, info.next_run)
    assert first.delivered and (again.ok, again.delivered) == (True, False)
    assert [s["text"] for s in telegram.sent] == ["once"]


async def test_missed_run_beyond_the_grace_is_skipped_and_logged(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    bot = TelegramBot(tmp_path, fake_llm, telegram)
    offline = await offline_service(bot.config.state_dir)
    an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
    job = offline.add(Schedule("every", "1d", "UTC"), OWNER_CHAT, "remind", "too late", next_run=an_hour_ago)
    await offline.stop()
    skipped = asyncio.ensure_future(next_event(bot.gateway.agent.events, CronSkipped))
    with caplog.at_level(logging.WARNING, logger="bot.scheduler.cron"):
        async with bot:
            assert (await skipped).job_id == job.id
            (remaining,) = bot.gateway.cron.jobs()
    assert f"cron job {job.id} skipped" in caplog.text
    assert telegram.sent == []
    assert remaining.next_run > datetime.now(UTC)


async def test_cli_jobs_reach_a_running_gateway(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as bot:
        await bot.gateway.manager.ready("telegram")
        config_file = tmp_path / "config.yaml"
        config_file.write_text(
            f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\nowners: [telegram:{OWNER}]\n"
            "channels:\n  telegram:\n    enabled: true\n    token: x\n"
        )

        async def cli(*args: str) -> str:
            result = await asyncio.to_thread(CliRunner().invoke, app, ["--config", str(config_file), *args])
            assert result.exit_code == 0, result.output
            return result.output

        added = await cli("cron", "add", "--to", f"telegram:{OWNER}", "--at", soon(1.5), "--remind", "from the cli")
        assert "Added job" in added and "not running" not in added
        (sent,) = await telegram.wait_for_sent(1)
        assert sent["text"] == "from the cli"

        await cli(
            "cron", "add", "--to", f"telegram:{OWNER}", "--every", "1d", "--remind", "daily nudge", "--name", "nudge"
        )
        job_id = next(j.id for j in bot.gateway.cron.jobs() if j.name == "nudge")
        assert "delivered" in await cli("cron", "run", job_id)
        assert (await telegram.wait_for_sent(2))[1]["text"] == "daily nudge"
        listing = await cli("cron", "list")
        assert f"{job_id}  'nudge'  every 1d (UTC)" in listing and "last: ok" in listing
        await cli("cron", "remove", job_id)
        assert [j for j in bot.gateway.cron.jobs() if j.id == job_id] == []


async def test_cron_tool_schedules_for_the_current_chat_and_guards_other_chats(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, {"allow_from": ["500"]}) as bot:
        await bot.gateway.manager.ready("telegram")
        fake_llm.script(
            ToolCalls((("cron", {"action": "add", "cron": "0 9 * * *", "remind": "stand-up", "name": "standup"}),)),
            Text("Scheduled."),
            ToolCalls((("cron", {"action": "add", "at": soon(3600), "remind": "sneaky", "to": "telegram:42"}),)),
            Text("I can't."),
            ToolCalls((("cron", {"action": "add", "cron": "99 9 * * *", "remind": "x"}),)),
            Text("Bad expression."),
        )
        telegram.text("remind me daily", chat_id=500, user_id=500)
        await telegram.wait_for_sent(1)
        (job,) = bot.gateway.cron.jobs()
        assert job.payload.creator == "telegram:500"
        assert (job.payload.target, job.payload.trust, job.name) == ("telegram:500", "user", "standup")
        telegram.text("remind the owner", chat_id=500, user_id=500)
        await telegram.wait_for_sent(2)
        telegram.text("bad one", chat_id=500, user_id=500)
        await telegram.wait_for_sent(3)
        assert len(bot.gateway.cron.jobs()) == 1
    results = [m["content"] for r in fake_llm.requests for m in r["messages"] if m["role"] == "tool"]
    assert any("only the bot's owners may schedule jobs for another chat" in r for r in results)
    assert any("not a valid cron expression" in r for r in results)
