"""Telegram: the Bot API through python-telegram-bot."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.telegram.probe import check_telegram

if TYPE_CHECKING:
    from bot.config.channels.telegram import TelegramConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.telegram.channel import TelegramChannel

    return TelegramChannel(publish, cast("TelegramConfig", section), media, retry, account=account)


KIND = Kind(
    "telegram",
    build,
    check_telegram,
    asks=(("token", "Telegram bot token (from @BotFather)"),),
    upload_limit=50 * 1024 * 1024,  # the Bot API's limit (photos 10 MB)
)
