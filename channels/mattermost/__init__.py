"""Mattermost: REST API v4 out, its WebSocket events in, buttons and slash commands on the gateway's HTTP server."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.mattermost.probe import check_mattermost

if TYPE_CHECKING:
    from bot.config.channels.mattermost import MattermostConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; its modules (and aiohttp's web server parts) are imported only here."""
    from channels.mattermost.channel import MattermostChannel

    return MattermostChannel(publish, cast("MattermostConfig", section), media, retry)


KIND = Kind(
    "mattermost",
    build,
    check_mattermost,
    asks=(
        ("url", "Mattermost server address (https://chat.example.org)"),
        ("token", "Mattermost bot account's access token (System Console → Bot Accounts)"),
    ),
)
