"""XMPP through slixmpp: one-to-one chats and MUC rooms; live replies as corrections, files over HTTP upload."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.xmpp.probe import check_xmpp

if TYPE_CHECKING:
    from bot.config.channels.xmpp import XmppConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; slixmpp is imported only here, when the bot is built."""
    from channels.xmpp.channel import XmppChannel

    return XmppChannel(publish, cast("XmppConfig", section), retry, media_dir=media)


KIND = Kind(
    "xmpp",
    build,
    check_xmpp,
    asks=(("jid", "The bot's XMPP address (such as bot@example.org)"), ("password", "Its password")),
)
