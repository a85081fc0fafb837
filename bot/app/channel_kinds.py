"""The chat platforms the core serves; each adapter is imported only when its channel is enabled."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config.schema import Config
    from bot.retry import RetryPolicy
    from channels.base import Channel, Publish

ChannelBuilder = Callable[["Publish", "Config", Path, "RetryPolicy | None"], "Channel"]


def _telegram(publish: Publish, config: Config, media_dir: Path, retry: RetryPolicy | None) -> Channel:
    from channels.telegram.channel import TelegramChannel

    return TelegramChannel(publish, config.channels.telegram, media_dir, retry)


def _discord(publish: Publish, config: Config, media_dir: Path, retry: RetryPolicy | None) -> Channel:
    from channels.discord.channel import DiscordChannel

    return DiscordChannel(publish, config.channels.discord, media_dir, retry)


def _slack(publish: Publish, config: Config, media_dir: Path, retry: RetryPolicy | None) -> Channel:
    from channels.slack.channel import SlackChannel

    return SlackChannel(publish, config.channels.slack, media_dir, retry)


def _whatsapp(publish: Publish, config: Config, media_dir: Path, retry: RetryPolicy | None) -> Channel:
    from channels.whatsapp.channel import WhatsAppChannel

    return WhatsAppChannel(publish, config.channels.whatsapp, media_dir, retry)


def _email(publish: Publish, config: Config, media_dir: Path, retry: RetryPolicy | None) -> Channel:
    from channels.email.channel import EmailChannel

    return EmailChannel(publish, config.channels.email, media_dir, config.state_dir / "email", retry)


CHAT_CHANNELS: dict[str, ChannelBuilder] = {
    "telegram": _telegram,
    "discord": _discord,
    "slack": _slack,
    "whatsapp": _whatsapp,
    "email": _email,
}
WEBHOOK_CHANNELS = frozenset({"whatsapp"})
"""The channels whose platform calls the gateway over HTTP rather than being polled or connected to."""


def enabled_channels(config: Config) -> list[str]:
    """Names of the chat channels switched on in the config."""
    return [name for name in CHAT_CHANNELS if getattr(config.channels, name).enabled]
