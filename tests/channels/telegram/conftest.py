"""The Telegram tests' bot: a gateway with default settings on the fake Bot API, its channel ready; a module that
needs other settings defines its own `bot`."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import TelegramBot


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram) -> AsyncIterator[TelegramBot]:
    async with TelegramBot(tmp_path, fake_llm, telegram) as running:
        await running.gateway.manager.ready("telegram")
        yield running
