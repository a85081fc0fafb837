"""`relaybot sessions CHAT` lists a chat's archived sessions; `--resume N` resumes one through the running gateway."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest_asyncio
from typer.testing import CliRunner

from bot.app.backend import stores_for
from bot.cli.main import app as cli_app
from bot.config.loader import load_config
from bot.sessions.session import Sessions
from tests.channels.api.conftest import OWNER_TOKEN, ApiBot, bearer
from tests.fakes.openai_server import FakeLLM


def archive(store: Sessions, key: str, *topics: str) -> None:
    """One archived conversation per topic, oldest first."""
    for topic in topics:
        session = store.get(key)
        store.append(session, [{"role": "user", "content": f"about {topic}"}, {"role": "assistant", "content": "ok"}])
        store.reset(key)


def test_sessions_lists_a_chats_archives_without_a_gateway(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(f"state_dir: {tmp_path / 'state'}\nworkspace: {tmp_path / 'work'}\n")
    archive(stores_for(load_config(path)).sessions(), "telegram:5", "tides", "kites")
    runner = CliRunner()
    listed = runner.invoke(cli_app, ["--config", str(path), "sessions", "telegram:5"])
    empty = runner.invoke(cli_app, ["--config", str(path), "sessions", "telegram:6"])
    refused = runner.invoke(cli_app, ["--config", str(path), "sessions", "telegram:5", "--resume", "1"])
    assert listed.exit_code == 0
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("1. ") and lines[0].endswith("about kites") and lines[1].endswith("about tides")
    assert empty.stdout == "telegram:6 has no archived sessions.\n"
    assert refused.exit_code == 1 and "No gateway is running" in refused.stderr


@pytest_asyncio.fixture
async def api_bot(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[ApiBot]:
    async with ApiBot(tmp_path / "bot", fake_llm) as bot:
        yield bot


async def test_resume_goes_through_the_gateway_and_the_chat_is_told(api_bot: ApiBot, tmp_path: Path) -> None:
    archive(api_bot.gateway.agent.sessions, "api:me:default", "tides", "kites")
    path = tmp_path / "config.yaml"
    path.write_text(f"state_dir: {api_bot.config.state_dir}\nworkspace: {api_bot.config.workspace}\n")
    async with aiohttp.ClientSession() as http, http.ws_connect(api_bot.ws_url, headers=bearer(OWNER_TOKEN)) as ws:
        await ws.receive_json(timeout=5)
        args = ["--config", str(path), "sessions", "api:me:default", "--resume", "2"]
        result = await asyncio.to_thread(CliRunner().invoke, cli_app, args)
        assert result.exit_code == 0 and "Asked the gateway to resume session 2" in result.stdout
        while (frame := await ws.receive_json(timeout=10))["type"] != "message":
            pass
    assert frame["text"] == "Resumed the session of 'about tides' (2 messages)."
    assert api_bot.gateway.agent.sessions.get("api:me:default").messages[0]["content"] == "about tides"
