"""Slack: Socket Mode and the Web API through slack-bolt and slack-sdk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.slack.probe import check_slack

if TYPE_CHECKING:
    from bot.commands.catalogue import CommandSpec
    from bot.config.channels.slack import SlackConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.slack.channel import SlackChannel

    return SlackChannel(publish, cast("SlackConfig", section), media, retry, account=account)


def manifest(name: str, commands: Sequence[CommandSpec]) -> dict[str, Any]:
    """The Slack app manifest to paste at api.slack.com/apps; its module is imported only when one is asked for."""
    from channels.slack.manifest import slack_manifest

    return slack_manifest(name, commands)


KIND = Kind(
    "slack",
    build,
    check_slack,
    asks=(
        ("bot_token", "Slack bot token (xoxb-…)"),
        ("app_token", "Slack app token for Socket Mode (xapp-…)"),
    ),
    manifest=manifest,
    upload_limit=1024 * 1024 * 1024,
)
