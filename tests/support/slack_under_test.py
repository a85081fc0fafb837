"""A SlackChannel alone against the fake Slack: what it publishes lands in a queue the test reads."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.bus import InboundMessage
from bot.config.schema_channels import SlackConfig
from channels.catchup import RecentChats
from channels.slack.channel import SlackChannel
from tests.fakes.slack_server import FakeSlack
from tests.gateway import slack_section


class SlackUnderTest:
    """`async with SlackUnderTest(tmp_path, slack) as bot:` starts the channel; `await bot.next()` reads a message."""

    def __init__(self, tmp_path: Path, slack: FakeSlack, chats: RecentChats | None = None, **section: Any) -> None:
        self.received: asyncio.Queue[InboundMessage] = asyncio.Queue()
        config = SlackConfig.model_validate(slack_section(slack, **section))
        self.channel = SlackChannel(self.received.put, config, tmp_path / "media")
        if chats is not None:
            self.channel.remember_chats(chats)

    async def __aenter__(self) -> SlackUnderTest:
        await self.channel.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.channel.stop()

    async def next(self, timeout: float = 5) -> InboundMessage:
        """The next message the channel published."""
        return await asyncio.wait_for(self.received.get(), timeout)
