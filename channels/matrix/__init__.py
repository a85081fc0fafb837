"""Matrix through matrix-nio: one long-polled /sync in, room events out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.matrix.probe import check_matrix

if TYPE_CHECKING:
    from bot.config.channels.matrix import MatrixConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; the platform's library is imported only here, when the bot is built."""
    from channels.matrix.channel import MatrixChannel

    return MatrixChannel(publish, cast("MatrixConfig", section), media, state / "sync.json", retry)


KIND = Kind("matrix", build, check_matrix)
