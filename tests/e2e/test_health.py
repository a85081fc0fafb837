"""Health over HTTP: /healthz, /readyz and /metrics on `health.port`; a wedged Telegram poller is restarted."""

from __future__ import annotations

import logging
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import OWNER, TelegramBot
from tests.support.polling import until


async def get(port: int, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.text()


async def test_health_listener_reports_ready_and_counts_turns(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    async with TelegramBot(tmp_path, fake_llm, telegram, health={"port": 0}) as bot:
        await bot.gateway.manager.ready("telegram")
        server = bot.gateway.health_server
        assert server is not None
        assert await get(server.port, "/healthz") == (200, '{"ok": true}')
        status, body = await get(server.port, "/readyz")
        assert status == 200, body
        telegram.text("hello", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        status, metrics = await get(server.port, "/metrics")
        assert status == 200
        assert 'relaybot_turns_total{outcome="answered"} 1.0' in metrics
        assert 'relaybot_llm_tokens_total{model="openai/fake-model",type="input"}' in metrics
        assert "relaybot_turn_seconds_bucket" in metrics
        assert "relaybot_outbox_backlog 0.0" in metrics


async def test_wedged_poller_is_restarted_with_one_warning_and_answers_again(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    options = {"poll_timeout": 1}
    async with TelegramBot(tmp_path, fake_llm, telegram, telegram_options=options, health={"port": 0}) as bot:
        await bot.gateway.manager.ready("telegram")
        server = bot.gateway.health_server
        assert server is not None
        telegram.hold("getUpdates")  # Telegram stops answering; the connection stays open
        with caplog.at_level(logging.WARNING, "channels.gateway.watchdog"):
            await until(lambda: _not_ready(server.port), 10, interval=0.1)  # two timeouts without a poll
            assert "wedged" not in caplog.text
            await until(lambda: "wedged" in caplog.text, 10, interval=0.1)  # three: restarted
        assert len([r for r in caplog.records if r.name == "channels.gateway.watchdog"]) == 1
        await telegram.wait_for_call("getMe", 2)  # started again
        telegram.release("getUpdates")
        telegram.text("still there?", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1, timeout=20)
        await until(lambda: _ready(server.port), 10, interval=0.1)


async def _ready(port: int) -> bool:
    status, _ = await get(port, "/readyz")
    return status == 200


async def _not_ready(port: int) -> bool:
    status, body = await get(port, "/readyz")
    return status == 503 and "no successful poll" in body
