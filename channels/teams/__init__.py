"""Microsoft Teams: the Bot Connector's JWT-signed webhook in, the Connector's REST API out (Agents SDK client)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.teams.probe import check_teams

if TYPE_CHECKING:
    from bot.config.channels.teams import TeamsConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.teams.channel import TeamsChannel

    return TeamsChannel(publish, cast("TeamsConfig", section), media, retry)


KIND = Kind(
    "teams",
    build,
    check_teams,
    webhook=True,
    asks=(("app_id", "Azure Bot's Microsoft App ID"), ("app_password", "its client secret")),
)
