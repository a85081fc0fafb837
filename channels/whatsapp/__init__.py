"""WhatsApp: the Business Cloud API's signed webhook in, the Graph API out (plain aiohttp)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.whatsapp.probe import check_whatsapp

if TYPE_CHECKING:
    from bot.config.channels.whatsapp import WhatsAppConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.whatsapp.channel import WhatsAppChannel

    return WhatsAppChannel(publish, cast("WhatsAppConfig", section), media, retry)


KIND = Kind("whatsapp", build, check_whatsapp, webhook=True)
