from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import pytest_asyncio
from typer.testing import CliRunner

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.cli.main import app
from bot.llm.types import ToolCall
from bot.scheduler.cron import CronService
from bot.scheduler.schedules import Schedule
from bot.tools.base import ToolContext, ToolRegistry
from bot.tools.cron import CronTool

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest_asyncio.fixture
async def registry(tmp_path: Path) -> AsyncIterator[ToolRegistry]:
    """The cron tool over a paused job store, behind the registry that turns refusals into results."""
    service = CronService(tmp_path, "UTC", misfire_grace=600)
    await service.start(paused=True)
    yield ToolRegistry([CronTool(service, "UTC")], {Trust.GUEST: ["cron"], Trust.USER: ["cron"], Trust.ADMIN: ["cron"]})
    await service.stop()


def context(trust: Trust, sender: str = "500") -> ToolContext:
    async def send(message: OutboundMessage) -> None:
        return None

    return ToolContext(ChatRef("telegram", sender), sender, trust, "turn-1", send)


async def add(registry: ToolRegistry, trust: Trust, sender: str = "500", **args: str) -> str:
    call = ToolCall("call-1", "cron", {"action": "add", **args})
    result = await registry.execute(call, context(trust, sender))
    return result.content


@pytest.mark.parametrize(
    ("schedule", "seconds"),
    [
        (Schedule("every", "90s", "UTC"), 90.0),
        (Schedule("cron", "*/20 9-10 * * *", "UTC"), 1200.0),
        (Schedule("cron", "0 8 * * 1-5", "Europe/Berlin"), 86400.0),
        (Schedule("cron", "59 0,23 * * *", "UTC"), 3600.0),
        (Schedule("at", "2026-12-24T18:00", "UTC"), None),
    ],
)
def test_shortest_interval_of_a_schedule(schedule: Schedule, seconds: float | None) -> None:
    assert schedule.shortest_interval(NOW) == seconds


@pytest.mark.parametrize(
    ("args", "limit"),
    [
        ({"every": "1s", "message": "summarise the news"}, "guests may schedule a prompt (message) at most every 1h"),
        ({"every": "59m", "message": "check prices"}, "guests may schedule a prompt (message) at most every 1h"),
        ({"cron": "*/30 * * * *", "message": "check prices"}, "and this one would run every 30m"),
        ({"every": "30s", "remind": "drink water"}, "guests may schedule a reminder at most every 1m"),
    ],
)
async def test_guest_jobs_that_run_too_often_are_refused_naming_the_limit(
    registry: ToolRegistry, args: dict[str, str], limit: str
) -> None:
    result = await add(registry, Trust.GUEST, **args)
    assert result.startswith("Error: ") and limit in result


async def test_guest_jobs_at_the_limits_are_accepted(registry: ToolRegistry) -> None:
    assert (await add(registry, Trust.GUEST, every="1h", message="news")).startswith("Scheduled job")
    assert (await add(registry, Trust.GUEST, cron="0 * * * *", message="news")).startswith("Scheduled job")
    assert (await add(registry, Trust.GUEST, every="1m", remind="tick")).startswith("Scheduled job")


async def test_a_guest_holds_at_most_five_jobs_of_any_kind(registry: ToolRegistry) -> None:
    at = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    for kind in ("remind", "remind", "message", "remind", "message"):
        assert (await add(registry, Trust.GUEST, at=at, **{kind: "x"})).startswith("Scheduled job")
    refused = await add(registry, Trust.GUEST, at=at, remind="one more")
    assert refused.startswith("Error: guests may hold at most 5 scheduled jobs and you already have 5")
    assert (await add(registry, Trust.GUEST, sender="501", at=at, remind="another guest")).startswith("Scheduled")


async def test_owner_prompts_run_at_most_every_minute_and_reminders_as_often_as_wanted(
    registry: ToolRegistry,
) -> None:
    refused = await add(registry, Trust.OWNER, every="30s", message="poll the api")
    assert refused.startswith("Error: owners may schedule a prompt (message) at most every 1m")
    assert (await add(registry, Trust.OWNER, every="1m", message="poll the api")).startswith("Scheduled job")
    assert (await add(registry, Trust.OWNER, every="1s", remind="tick")).startswith("Scheduled job")
    for _ in range(6):
        assert (await add(registry, Trust.OWNER, every="1h", remind="many")).startswith("Scheduled job")


@pytest.mark.parametrize(
    ("trust", "who", "floor", "too_often", "max_jobs"),
    [(Trust.USER, "users", "1h", "59m", 20), (Trust.ADMIN, "admins", "5m", "4m", 100)],
)
async def test_users_and_admins_have_limits_of_their_own(
    registry: ToolRegistry, trust: Trust, who: str, floor: str, too_often: str, max_jobs: int
) -> None:
    refused = await add(registry, trust, every=too_often, message="poll")
    assert refused.startswith(f"Error: {who} may schedule a prompt (message) at most every {floor}")
    assert (await add(registry, trust, every=floor, message="poll")).startswith("Scheduled job")
    at = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    for _ in range(max_jobs - 1):
        assert (await add(registry, trust, at=at, remind="x")).startswith("Scheduled job")
    refused = await add(registry, trust, at=at, remind="one more")
    assert refused.startswith(f"Error: {who} may hold at most {max_jobs} scheduled jobs")


def test_cli_refuses_a_prompt_every_few_seconds_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(
        f"state_dir: {tmp_path / 'state'}\nchannels:\n  telegram:\n    enabled: true\n    token: x\n"
    )
    command = ["--config", str(tmp_path / "config.yaml"), "cron", "add", "--to", "telegram:42"]
    result = CliRunner().invoke(app, [*command, "--every", "10s", "--message", "poll"])
    assert result.exit_code == 2
    assert result.output == (
        "error: owners may schedule a prompt (message) at most every 1m, and this one would run every 10s; "
        "choose a longer interval; for a plain text, use remind instead\n"
    )
    fine = CliRunner().invoke(app, [*command, "--every", "10s", "--remind", "tick"])
    assert fine.exit_code == 0 and "Added job" in fine.output
