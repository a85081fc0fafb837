"""IRC through pydle: private messages and channel lines addressed by nick; replies as lines the server paces."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.irc.probe import check_irc
from channels.kind import Kind

if TYPE_CHECKING:
    from bot.config.channels.irc import IrcConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; pydle is imported only here, when the bot is built."""
    from channels.irc.channel import IrcChannel

    return IrcChannel(publish, cast("IrcConfig", section), retry)


KIND = Kind(
    "irc",
    build,
    check_irc,
    asks=(
        ("server", "IRC server (such as irc.libera.chat; TLS on port 6697)"),
        ("nick", "The bot's nick"),
        ("password", "The nick's services password, for SASL or NickServ (empty if unregistered)"),
    ),
)
