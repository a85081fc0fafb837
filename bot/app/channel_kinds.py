"""The chat platforms the core serves, and their bots; each adapter is imported only when its channel is enabled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.bus.messages import channel_key

if TYPE_CHECKING:
    from bot.config.channels.base import ChannelSection
    from bot.config.channels.discord import DiscordConfig
    from bot.config.channels.slack import SlackConfig
    from bot.config.channels.telegram import TelegramConfig
    from bot.config.schema import Config
    from bot.retry import RetryPolicy
    from channels.base import Channel, Publish

ChannelBuilder = Callable[["Publish", "Config", "ChatBot", Path, "RetryPolicy | None"], "Channel"]
"""builder(publish, config, the bot, media dir, retry): one channel instance for one bot."""


def _telegram(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.telegram.channel import TelegramChannel

    return TelegramChannel(publish, cast("TelegramConfig", bot.section), media, retry, account=bot.account)


def _discord(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.discord.channel import DiscordChannel

    return DiscordChannel(publish, cast("DiscordConfig", bot.section), media, retry, account=bot.account)


def _slack(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.slack.channel import SlackChannel

    return SlackChannel(publish, cast("SlackConfig", bot.section), media, retry, account=bot.account)


def _matrix(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.matrix.channel import MatrixChannel

    state_file = config.state_dir / "matrix" / "sync.json"
    return MatrixChannel(publish, config.channels.matrix, media, state_file, retry)


def _whatsapp(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.whatsapp.channel import WhatsAppChannel

    return WhatsAppChannel(publish, config.channels.whatsapp, media, retry)


def _email(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.email.channel import EmailChannel

    return EmailChannel(publish, config.channels.email, media, config.state_dir / "email", retry)


def _mattermost(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.mattermost.channel import MattermostChannel

    return MattermostChannel(publish, config.channels.mattermost, media, retry)


def _signal(publish: Publish, config: Config, bot: ChatBot, media: Path, retry: RetryPolicy | None) -> Channel:
    from channels.signal.channel import SignalChannel

    return SignalChannel(publish, config.channels.signal, media, retry)


CHAT_CHANNELS: dict[str, ChannelBuilder] = {
    "telegram": _telegram,
    "discord": _discord,
    "slack": _slack,
    "matrix": _matrix,
    "whatsapp": _whatsapp,
    "email": _email,
    "mattermost": _mattermost,
    "signal": _signal,
}
WEBHOOK_CHANNELS = frozenset({"whatsapp"})
"""The channels whose platform calls the gateway over HTTP rather than being polled or connected to."""


@dataclass(frozen=True, slots=True)
class ChatBot:
    """One bot of an enabled platform: the default one (account None) or a named account, with its settings."""

    platform: str
    account: str | None
    section: ChannelSection

    @property
    def key(self) -> str:
        """The channel key the gateway knows it by: `telegram`, `telegram@work`."""
        return channel_key(self.platform, self.account)


def enabled_channels(config: Config) -> list[str]:
    """Names of the chat channels switched on in the config."""
    return [name for name in CHAT_CHANNELS if getattr(config.channels, name).enabled]


def chat_bots(config: Config) -> list[ChatBot]:
    """Every bot of every enabled chat platform, each platform's default bot first."""
    return [
        ChatBot(name, account, section)
        for name in enabled_channels(config)
        for account, section in getattr(config.channels, name).bots().items()
    ]
