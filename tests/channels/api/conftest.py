"""A gateway with the API channel enabled, against the fake LLM; tokens for an owner and a guest."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tests.fakes.openai_server import FakeLLM
from tests.support.harness import GatewayUnderTest

OWNER_TOKEN = "owner-secret-token"
GUEST_TOKEN = "guest-secret-token"


def bearer(token: str) -> dict[str, str]:
    """The header a script authenticates with."""
    return {"Authorization": f"Bearer {token}"}


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ApiBot(GatewayUnderTest):
    """`relaybot run` with only the API channel; token `me` is an owner, `visitor` a guest."""

    def __init__(
        self,
        tmp_path: Path,
        fake_llm: FakeLLM,
        owners: list[str] = (),
        other_channels: dict[str, dict] | None = None,
        api: dict[str, object] | None = None,
        **overrides: object,
    ) -> None:
        self.port = free_port()
        section = {
            "enabled": True,
            "port": self.port,
            "tokens": [
                {"token": OWNER_TOKEN, "name": "me", "trust": "owner"},
                {"token": GUEST_TOKEN, "name": "visitor", "trust": "guest"},
            ],
            **(api or {}),
        }
        channels = {"api": section, **(other_channels or {})}
        super().__init__(tmp_path, fake_llm, list(owners), channels, **overrides)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def __aenter__(self) -> ApiBot:
        await super().__aenter__()
        await self.gateway.manager.ready("api")
        return self


@pytest_asyncio.fixture
async def api_bot(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[ApiBot]:
    """A started gateway serving the API on a free loopback port."""
    async with ApiBot(tmp_path, fake_llm) as bot:
        yield bot
