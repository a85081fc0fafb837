"""Email: IMAP in (IDLE, else polling) through aioimaplib, SMTP out through aiosmtplib; a thread is a session."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.email.probe import check_email
from channels.kind import Kind

if TYPE_CHECKING:
    from bot.config.channels.email import EmailConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.email.channel import EmailChannel

    return EmailChannel(publish, cast("EmailConfig", section), media, state, retry)


KIND = Kind("email", build, check_email)
