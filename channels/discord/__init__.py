"""Discord: the gateway and REST API through discord.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.discord.probe import check_discord
from channels.kind import Kind

if TYPE_CHECKING:
    from bot.config.channels.discord import DiscordConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.discord.channel import DiscordChannel

    return DiscordChannel(publish, cast("DiscordConfig", section), media, retry, account=account)


KIND = Kind(
    "discord",
    build,
    check_discord,
    asks=(("token", "Discord bot token (developer portal; enable the Message Content intent)"),),
    upload_limit=10 * 1024 * 1024,  # a server without boosts
)
