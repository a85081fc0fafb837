"""Ignore notices: a sender the bot ignores is logged once, not at every message."""

from __future__ import annotations

from typing import Protocol

from bot.storage.recent import RecentMap

MAX_REMEMBERED = 10_000  # ignored senders remembered; one forgotten is logged again when it writes again


class IgnoreNotices(Protocol):
    """Remembers which ignored senders were already logged, so each is logged once."""

    def first(self, channel: str, sender: str) -> bool: ...


class NoticesInProcess:
    """Ignored senders logged by this process (the local backend's; Redis shares them between gateways)."""

    def __init__(self, remembered: int = MAX_REMEMBERED) -> None:
        self._seen: RecentMap[tuple[str, str], None] = RecentMap(remembered)

    def first(self, channel: str, sender: str) -> bool:
        """True the first time `sender` on `channel` is asked about (among the `remembered` asked about last)."""
        key = (channel, sender)
        if key in self._seen:
            self._seen.touch(key)
            return False
        self._seen[key] = None
        return True
