"""Fixtures for calling tools directly: a per-test context whose messages land in `sent`."""

import pytest

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.tools.base import ToolContext


@pytest.fixture
def sent() -> list[OutboundMessage]:
    """Messages tools sent through the context."""
    return []


@pytest.fixture
def ctx(sent: list[OutboundMessage]) -> ToolContext:
    """An owner's context in chat test:1."""

    async def send(message: OutboundMessage) -> None:
        sent.append(message)

    return ToolContext(ChatRef("test", "1"), "u1", Trust.OWNER, "turn-1", send)
