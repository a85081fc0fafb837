"""Two `relaybot run` processes on one Redis: a cron reminder fires once while the scheduler leader is killed."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.cluster.redis import RedisState
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway_process import GatewayProcess
from tests.support.polling import until

OWNER = 42
PREFIX = "failover"


def process(home: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str) -> GatewayProcess:
    # A holder must renew within 2/3 of the lease, and a loaded machine blocks a starting process's loop (its
    # imports) for seconds: with 3 s the leader lost its leases while it started. The standby takes both leases
    # when the killed leader's connections close (one watch, begun while it waits for the channel's), not at 10 s.
    bus = {"backend": "redis", "url": redis_url, "prefix": PREFIX, "lease": "10s"}
    return GatewayProcess(home, fake_llm, telegram, [OWNER], bus=bus)


async def cli(home: Path, *args: str) -> str:
    """`relaybot …` in this process, against the cluster's Redis (as from a third machine)."""
    invoke = CliRunner().invoke
    result = await asyncio.to_thread(invoke, app, list(args), env={"RELAYBOT_HOME": str(home)})
    assert result.exit_code == 0, result.output
    return result.output


def at(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


async def standing_by(state: RedisState, n: int) -> None:
    """Wait until `n` processes read the inbox (a standby does before it waits for the leases)."""

    async def reading() -> bool:
        return len(await state.aclient.xinfo_consumers(state.key("inbox"), "workers")) >= n

    await until(reading, 30, interval=0.05)


@contextlib.asynccontextmanager
async def leader_and_standby(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> AsyncIterator[tuple[GatewayProcess, GatewayProcess]]:
    """Two `relaybot run` on one Redis: the leader polling Telegram, the standby waiting for the leases."""
    leader = process(tmp_path / "a", fake_llm, telegram, redis_url)
    standby = process(tmp_path / "b", fake_llm, telegram, redis_url)
    state = RedisState(redis_url, PREFIX)
    try:
        await leader.start()
        await standby.spawn()
        await standing_by(state, 2)
        yield leader, standby
    finally:
        for running in (leader, standby):
            if running.process is not None:
                if running.process.returncode is None:
                    running.process.kill()
                _, err = await running.process.communicate()
                print(f"--- {running.home.name} stderr\n{err.decode()[-4000:]}")  # shown when the test fails
        await state.aclose()


async def test_a_cron_reminder_fires_once_while_the_leader_is_killed_and_replaced(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    async with leader_and_standby(tmp_path, fake_llm, telegram, redis_url) as (leader, _):
        to = f"telegram:{OWNER}"
        await cli(leader.home, "cron", "add", "--to", to, "--at", at(3.0), "--remind", "first")
        (first,) = await telegram.wait_for_sent(1)
        assert first["text"] == "first"

        await cli(leader.home, "cron", "add", "--to", to, "--at", at(4.0), "--remind", "second")
        await leader.kill()  # before it is due: the job is in Redis, only the standby can fire it
        sent = await telegram.wait_for_sent(2, timeout=30)
        assert [s["text"] for s in sent] == ["first", "second"]

        added = await cli(leader.home, "cron", "add", "--to", to, "--every", "1d", "--remind", "nudge")
        job_id = added.split()[2].rstrip(";")
        assert "ran and was delivered" in await cli(leader.home, "cron", "run", job_id)
        assert "last: ok" in await cli(leader.home, "cron", "list")
        fake_llm.script(Text("barrier"))  # the chat's replies go out in order: a second nudge would come before it
        telegram.text("anything more?", chat_id=OWNER, user_id=OWNER)
        sent = await telegram.wait_for_sent(4, timeout=30)
        assert [s["text"] for s in sent] == ["first", "second", "nudge", "barrier"]


async def test_a_standby_waiting_for_its_leases_stops_on_sigterm(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, redis_url: str
) -> None:
    async with leader_and_standby(tmp_path, fake_llm, telegram, redis_url) as (leader, standby):
        err = await standby.stop()  # within stop()'s 30 s, though the leader holds the leases all along
        assert "gateway stopped" in err
        assert standby.process is None and leader.process is not None and leader.process.returncode is None
