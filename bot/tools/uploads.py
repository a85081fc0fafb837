"""Which chats take files from the bot, and up to what size: each platform's KIND says, the composition root passes
it to the tools that send files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.bus import ChatRef

MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class UploadLimits:
    """The most a bot may upload to a chat, in bytes, by platform; a platform not named takes no files from it."""

    by_platform: Mapping[str, int] = field(default_factory=dict)

    def of(self, chat: ChatRef) -> int | None:
        """The largest file `chat` takes from the bot, or None when it takes none."""
        return self.by_platform.get(chat.channel)

    def takes_files(self, chat: ChatRef) -> bool:
        """Whether the bot can send files to `chat` at all."""
        return chat.channel in self.by_platform
