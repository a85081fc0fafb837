"""What a platform package brings to the house, as its `KIND`: how to build one bot's channel and, as it has them,
its credential probe, the questions `relaybot init` asks for it and its app manifest writer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from bot.commands.catalogue import CommandSpec
    from bot.config.channels.base import ChannelSection
    from bot.retry import RetryPolicy
    from bot.setup.check import Probe
    from channels.base import Channel, Publish


class ChannelBuilder(Protocol):
    """One bot's channel: its section (an account's laid over the platform's), account name, media and state folders."""

    def __call__(
        self,
        publish: Publish,
        section: ChannelSection,
        account: str | None,
        media: Path,
        state: Path,
        retry: RetryPolicy | None,
    ) -> Channel: ...


class ManifestWriter(Protocol):
    """The app manifest of a bot called `name` offering `commands`, as YAML-ready data (`relaybot manifest`)."""

    def __call__(self, name: str, commands: Sequence[CommandSpec]) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Kind:
    """A chat platform: `name` is its config section under `channels` and its channel name on the bus; `webhook` says
    whether the platform calls the gateway over HTTP; `asks` holds (key, question) pairs for `relaybot init`;
    `manifest` writes the app manifest of a platform set up by pasting one (Slack); `upload_limit` is the largest
    file, in bytes, a bot may send there (None: the tools send it no files)."""

    name: str
    build: ChannelBuilder
    probe: Probe | None = None
    webhook: bool = False
    asks: tuple[tuple[str, str], ...] = ()
    manifest: ManifestWriter | None = None
    upload_limit: int | None = None
