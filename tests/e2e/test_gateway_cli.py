"""The CLI talking to a running gateway: status, cron add checks, cron run, and one-line failures."""

import asyncio
import logging
import socket
import threading
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from bot.bus import ChatRef
from bot.cli.gateway_client import ask_gateway
from bot.cli.main import app as cli_app
from bot.config.loader import load_config
from bot.scheduler.schedules import Schedule
from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import env_for
from tests.support.gateway import TelegramBot
from tests.support.polling import until


def config_for(bot: TelegramBot, path: Path) -> Path:
    path.write_text(
        f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n"
        f"channels:\n  telegram:\n    enabled: true\n    token: x\n"
    )
    return path


async def cli(config: Path, *args: str) -> tuple[int, str]:
    result = await asyncio.to_thread(CliRunner().invoke, cli_app, ["--config", str(config), *args])
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (
            ["--to", "icq:1", "--every", "1h"],
            "no channel 'icq'; channels are telegram, discord, slack",
        ),
        (["--to", "discord:1", "--every", "1h"], "channel discord is not enabled"),
        (["--to", "telegram:1", "--every", "5"], "'5' has no unit"),
    ],
)
def test_cron_add_refuses_unknown_or_disabled_targets_and_bare_numbers(
    tmp_path: Path, args: list[str], problem: str
) -> None:
    (tmp_path / "config.yaml").write_text("channels:\n  telegram:\n    enabled: true\n    token: x\n")
    result = CliRunner().invoke(cli_app, ["cron", "add", *args, "--remind", "x"], env=env_for(tmp_path))
    assert result.exit_code == 2
    assert problem in result.output and "Traceback" not in result.output


async def test_cron_run_for_a_disabled_channel_fails_at_once_in_one_line(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        await running.gateway.manager.ready("telegram")
        job = running.gateway.cron.add(Schedule("every", "1d", "UTC"), ChatRef("discord", "5"), "remind", "x", None)
        config = config_for(running, tmp_path / "config.yaml")
        async with asyncio.timeout(60):  # at once: not after the 930 s a job that runs may take
            code, output = await cli(config, "cron", "run", job.id)
    assert code == 1
    assert output.strip().splitlines() == [
        f"Job {job.id} failed: its target discord:5 is on a channel that is not enabled"
    ]


async def test_status_shows_a_rejected_token_masked_as_failed_after_one_error_line(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="channels.gateway.supervisor")
    async with TelegramBot(tmp_path, fake_llm, telegram, {"token": "999:REVOKED-TOKEN"}) as running:
        await until(lambda: running.gateway.manager.health()["telegram"].failures >= 3, 10, interval=0.05)
        assert running.gateway.manager.health()["telegram"].state == "failed"
        code, output = await cli(config_for(running, tmp_path / "config.yaml"), "status")
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "telegram: failed to start" in errors[0].getMessage()
    assert code == 0
    assert "gateway:   running for" in output
    line = next(line for line in output.splitlines() if line.startswith("telegram:"))
    assert "FAILED" in line and "last error: " in line and "rejected by the server" in line
    assert "REVOKED-TOKEN" not in output and "***" in line  # masked as the log masks it


def test_status_without_a_gateway_says_it_is_not_running(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("channels:\n  telegram:\n    enabled: true\n    token: x\n")
    result = CliRunner().invoke(cli_app, ["status"], env=env_for(tmp_path))
    assert result.exit_code == 0
    assert "gateway:   not running" in result.output
    assert "telegram:  enabled (gateway not running)" in result.output


def test_a_gateway_that_does_not_answer_fails_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.yaml").write_text(f"llm:\n  model: openai/x\nstate_dir: {tmp_path / 'state'}\n")
    config = load_config(tmp_path / "config.yaml", env={})
    path = tmp_path / "state" / "control.sock"
    path.parent.mkdir(parents=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)
    accepted: list[socket.socket] = []
    threading.Thread(target=lambda: accepted.append(listener.accept()[0]), daemon=True).start()
    try:
        with pytest.raises(typer.Exit) as exited:
            ask_gateway(config, {"op": "status"}, timeout=0.3)  # what `relaybot status` asks, with a short wait
    finally:
        listener.close()
        for conn in accepted:
            conn.close()
    assert exited.value.exit_code == 1
    assert capsys.readouterr().err == "error: the gateway did not answer within 0s; check it with `relaybot logs`.\n"


def test_status_lists_the_web_chat_and_api_channel(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("channels:\n  api:\n    enabled: true\n    port: 8765\n")
    result = CliRunner().invoke(cli_app, ["status"], env=env_for(tmp_path))
    assert result.exit_code == 0
    line = next(line for line in result.output.splitlines() if line.startswith("api:"))
    assert line == "api:       enabled (gateway not running) (web chat and API at http://127.0.0.1:8765/)"
