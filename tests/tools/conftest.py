"""Fixtures for calling tools directly: a per-test context whose messages land in `sent`, and bwrap."""

import shutil

import pytest

from bot.bus import ChatRef, OutboundMessage, Trust
from bot.tools.base import ToolContext
from bot.tools.sandbox import bwrap_problem


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


@pytest.fixture(scope="session")
def bwrap() -> str:
    """A bwrap that can build a sandbox here; the test is skipped, with the reason, where none can."""
    found = shutil.which("bwrap")
    if found is None:
        pytest.skip("bwrap is not installed (Debian package bubblewrap)")
    if problem := bwrap_problem(found):
        pytest.skip(problem)
    return found
