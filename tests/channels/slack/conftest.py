"""The Slack tests' bots, on the fake Slack Web API and Socket Mode: `bot`, a gateway with default settings,
connected; `adapter`, the channel alone with a publish recorder. A module that needs other settings defines its
own."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_server import FakeSlack
from tests.support.adapter import AdapterUnderTest, slack_adapter
from tests.support.gateway import SlackBot


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, slack: FakeSlack) -> AsyncIterator[SlackBot]:
    async with SlackBot(tmp_path, fake_llm, slack) as running:
        yield running


@pytest_asyncio.fixture
async def adapter(tmp_path: Path, slack: FakeSlack) -> AsyncIterator[AdapterUnderTest]:
    async with slack_adapter(slack, tmp_path / "media") as running:
        yield running
