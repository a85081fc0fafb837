"""Slack: Socket Mode and the Web API through slack-bolt and slack-sdk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.slack.probe import check_slack

if TYPE_CHECKING:
    from bot.config.channels.slack import SlackConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.slack.channel import SlackChannel

    return SlackChannel(publish, cast("SlackConfig", section), media, retry, account=account)


KIND = Kind(
    "slack",
    build,
    check_slack,
    asks=(
        ("bot_token", "Slack bot token (xoxb-…)"),
        ("app_token", "Slack app token for Socket Mode (xapp-…)"),
    ),
)
