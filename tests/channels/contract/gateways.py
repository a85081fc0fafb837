"""A gateway with one platform enabled, as the contract suite runs it, and what the model was asked."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeLLM
from tests.support.harness import GatewayUnderTest
from tests.support.platform import Platform


@asynccontextmanager
async def gateway(
    tmp_path: Path, fake_llm: FakeLLM, platform: Platform, section: dict[str, Any] | None = None, **overrides: Any
) -> AsyncIterator[GatewayUnderTest]:
    """`relaybot run` with only `platform` enabled and its owner the owner; `section` adds keys to its section,
    `overrides` sets other top-level config sections."""
    channel = {"enabled": True, **platform.section, **(section or {})}
    owners = [f"{platform.name}:{platform.owner}"]
    sections = {**platform.gateway_sections, **overrides}
    async with GatewayUnderTest(tmp_path, fake_llm, owners, {platform.name: channel}, **sections) as running:
        platform.serving(running)
        yield running


def user_texts(fake_llm: FakeLLM) -> list[str]:
    """The text of the last user message of each model request, in order."""
    texts = []
    for request in fake_llm.requests:
        content = request["messages"][-1]["content"]
        texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts
