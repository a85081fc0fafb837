"""The Discord tests' bots, on the fake Discord API and gateway: `bot`, a gateway with default settings and its
channel ready; `adapter`, the channel alone with a publish recorder. A module that needs other settings defines
its own."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM
from tests.support.adapter import AdapterUnderTest, discord_adapter
from tests.support.gateway import DiscordBot


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, discord: FakeDiscord) -> AsyncIterator[DiscordBot]:
    async with DiscordBot(tmp_path, fake_llm, discord) as running:
        await running.gateway.manager.ready("discord")
        yield running


@pytest_asyncio.fixture
async def adapter(tmp_path: Path, discord: FakeDiscord) -> AsyncIterator[AdapterUnderTest]:
    async with discord_adapter(discord, tmp_path) as running:
        yield running
