"""The API channel also serves /healthz, /readyz and /metrics, without a token, and opens no health listener."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.channels.api.conftest import ApiBot
from tests.fakes.openai_server import FakeLLM


async def test_api_channel_serves_the_health_routes(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with ApiBot(tmp_path, fake_llm, health={"port": 0}) as bot:
        await bot.gateway.manager.ready("api")
        assert bot.gateway.health_server is None
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{bot.url}/healthz") as response:
                assert response.status == 200
            async with http.get(f"{bot.url}/readyz") as response:
                body = await response.json()
                assert response.status == 200 and body["channels"] == {"api": "ok"}
            async with http.get(f"{bot.url}/metrics") as response:
                assert response.status == 200 and "relaybot_inbox_depth 0.0" in await response.text()
