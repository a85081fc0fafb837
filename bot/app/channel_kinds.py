"""The chat platforms the core serves (channels' registry of kinds), and their bots; each adapter is imported only
when one of its bots is built."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bus.messages import channel_key
from bot.config.channels.base import ChannelSection
from bot.config.schema import Config
from bot.tools.uploads import UploadLimits
from channels.kind import Kind
from channels.platforms import KINDS


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

    @property
    def kind(self) -> Kind:
        """What its platform package brings: how to build its channel, its probe, its menus."""
        return KINDS[self.platform]


def enabled_channels(config: Config) -> list[str]:
    """Names of the chat channels switched on in the config."""
    sections = config.channels.chat_sections()
    return [name for name in KINDS if sections[name].enabled]


def chat_bots(config: Config) -> list[ChatBot]:
    """Every bot of every enabled chat platform, each platform's default bot first."""
    sections = config.channels.chat_sections()
    return [
        ChatBot(name, account, section)
        for name in enabled_channels(config)
        for account, section in sections[name].bots().items()
    ]


def upload_limits() -> UploadLimits:
    """Which chats take files from the bot and up to what size, as each platform's KIND says."""
    return UploadLimits({kind.name: kind.upload_limit for kind in KINDS.values() if kind.upload_limit is not None})
