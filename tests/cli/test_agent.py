"""`relaybot agent` against a running gateway with the API channel, and without one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from typer.testing import CliRunner

from bot.cli.main import app as cli_app
from tests.channels.api.conftest import ApiBot
from tests.fakes.openai_server import Error, FakeLLM, Text


@pytest_asyncio.fixture
async def api_bot(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[ApiBot]:
    """A running gateway with the API channel on."""
    async with ApiBot(tmp_path / "bot", fake_llm) as bot:
        yield bot


def config_for(bot: ApiBot, path: Path, api: bool = True) -> Path:
    """A config file naming the running gateway's folders, so the CLI finds its control socket."""
    channels = f"channels:\n  api:\n    enabled: {'true' if api else 'false'}\n    port: {bot.port}\n"
    path.write_text(f"workspace: {bot.config.workspace}\nstate_dir: {bot.config.state_dir}\n{channels}")
    return path


async def cli(config: Path, *args: str) -> tuple[int, str, str]:
    result = await asyncio.to_thread(CliRunner().invoke, cli_app, ["--config", str(config), "agent", *args])
    return result.exit_code, result.stdout, result.stderr


async def test_agent_with_wait_prints_the_reply(api_bot: ApiBot, fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(Text("Here from the gateway."))
    code, out, _ = await cli(config_for(api_bot, tmp_path / "config.yaml"), "-m", "hello", "--wait")
    assert code == 0 and out == "Here from the gateway.\n"
    assert api_bot.gateway.agent.sessions.get("api:cli:default").messages


async def test_agent_without_wait_prints_the_run_id_and_json_has_the_outcome(
    api_bot: ApiBot, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    config = config_for(api_bot, tmp_path / "config.yaml")
    code, out, _ = await cli(config, "-m", "start it", "--session", "jobs")
    run = api_bot.gateway.api.runs.find("cli", out.strip()) if api_bot.gateway.api else None
    assert code == 0 and run is not None and run.session_key == "api:cli:jobs"
    code, out, _ = await cli(config, "-m", "and wait", "--session", "jobs", "--wait", "--json")
    outcome = json.loads(out)
    assert code == 0 and outcome["status"] == "ok" and outcome["reply"].endswith("and wait")


async def test_a_failed_run_exits_1_in_one_line(api_bot: ApiBot, fake_llm: FakeLLM, tmp_path: Path) -> None:
    fake_llm.script(*[Error(400, "bad request")] * 3)
    code, _, err = await cli(config_for(api_bot, tmp_path / "config.yaml"), "-m", "fail", "--wait")
    assert code == 1 and err.splitlines()[-1] == "error: the run ended with provider error"  # the rest: gateway logs


def test_agent_without_a_gateway_says_so(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n")
    result = CliRunner().invoke(cli_app, ["--config", str(tmp_path / "config.yaml"), "agent", "-m", "hi"])
    assert result.exit_code == 1 and "No gateway is running" in result.stderr


async def test_a_run_started_without_wait_is_waited_for_later_by_its_id(
    api_bot: ApiBot, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    config = config_for(api_bot, tmp_path / "config.yaml")
    fake_llm.script(Text("Done in the background.", latency=0.5))
    code, out, _ = await cli(config, "-m", "take your time")
    run_id = out.strip()
    assert code == 0 and run_id
    code, out, _ = await cli(config, "wait", run_id)
    assert (code, out) == (0, "Done in the background.\n")
    code, out, _ = await cli(config, "wait", run_id, "--json")
    assert code == 0 and json.loads(out)["reply"] == "Done in the background."
    code, _, err = await cli(config, "wait", "no-such-run")
    assert code == 1 and err.startswith("error: ")


async def test_agent_without_a_message_or_a_subcommand_says_how_to_use_it(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n")
    code, _, err = await cli(tmp_path / "config.yaml")
    assert code == 2 and "relaybot agent wait RUN_ID" in err


async def test_a_session_bound_to_an_agent_is_answered_by_it(tmp_path: Path, fake_llm: FakeLLM) -> None:
    bound = {"agent": "work", "channel": "api", "chat": "cli", "thread": "work"}
    async with ApiBot(tmp_path / "bot", fake_llm, agents=[{"name": "work"}], bindings=[bound]) as bot:
        config = config_for(bot, tmp_path / "config.yaml")
        code, out, _ = await cli(config, "-m", "for work", "--session", "work", "--wait")
        assert code == 0 and out.endswith("for work\n")
        work = bot.gateway.roster.built["work"]
        assert work.sessions.get("api:cli:work").messages
        assert not bot.gateway.agent.sessions.get("api:cli:work").messages
        code, out, _ = await cli(config, "-m", "elsewhere", "--session", "other", "--wait")
        assert code == 0 and bot.gateway.agent.sessions.get("api:cli:other").messages
