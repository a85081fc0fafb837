"""The Discord adapter alone on the fake Discord: what it publishes, in order, and the channel to send through."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.bus import InboundMessage
from bot.config.schema_channels import DiscordConfig
from channels.discord.channel import DiscordChannel
from tests.fakes.discord_server import FakeDiscord


class RunningAdapter:
    """`async with RunningAdapter(fake, folder) as bot`: a started DiscordChannel publishing into `bot.published`."""

    def __init__(self, fake: FakeDiscord, media_dir: Path, **section: Any) -> None:
        self.published: asyncio.Queue[InboundMessage] = asyncio.Queue()
        config = DiscordConfig(token=fake.token, api_base=fake.api_base, gateway_url=fake.gateway_url, **section)
        self.channel = DiscordChannel(self.published.put, config, media_dir)

    async def __aenter__(self) -> RunningAdapter:
        await self.channel.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.channel.stop()

    async def next(self, timeout: float = 5) -> InboundMessage:
        """The next message the adapter published."""
        return await asyncio.wait_for(self.published.get(), timeout)
