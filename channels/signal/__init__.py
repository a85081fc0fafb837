"""Signal through a signal-cli daemon the user runs: its JSON-RPC over HTTP out, its server-sent events in."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.kind import Kind
from channels.signal.probe import check_signal

if TYPE_CHECKING:
    from bot.config.channels.signal import SignalConfig


def build(
    publish: Publish, section: ChannelSection, account: str | None, media: Path, state: Path, retry: RetryPolicy | None
) -> Channel:
    """One bot's channel; its modules are imported only here."""
    from channels.signal.channel import SignalChannel

    return SignalChannel(publish, cast("SignalConfig", section), media, retry)


KIND = Kind(
    "signal",
    build,
    check_signal,
    asks=(
        ("url", "signal-cli daemon address (signal-cli -a +NUMBER daemon --http 127.0.0.1:8080)"),
        ("account", "The bot's Signal number, as +<country><number>"),
    ),
)
