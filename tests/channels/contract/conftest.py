"""The contract suite's fixtures: every test runs once per platform, against that platform's fake server."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.channels.contract.gateways import gateway
from tests.fakes.openai_server import FakeLLM
from tests.support.harness import GatewayUnderTest
from tests.support.platform import Platform
from tests.support.platforms import PLATFORMS


@pytest_asyncio.fixture(params=sorted(PLATFORMS))
async def platform(request: pytest.FixtureRequest) -> AsyncIterator[Platform]:
    fake_class, face = PLATFORMS[request.param]
    # A fake built on a real server takes it from a session fixture (`fixtures`): one Dovecot for the run.
    shared = [request.getfixturevalue(name) for name in getattr(fake_class, "fixtures", ())]
    async with fake_class(*shared) as fake:
        yield face(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, platform: Platform) -> AsyncIterator[GatewayUnderTest]:
    async with gateway(tmp_path, fake_llm, platform) as running:
        await running.gateway.manager.ready(platform.name)
        yield running
