"""Ignore notices: a sender the bot ignores is logged once, not at every message."""

from __future__ import annotations

from typing import Protocol


class IgnoreNotices(Protocol):
    """Remembers which ignored senders were already logged, so each is logged once."""

    def first(self, channel: str, sender: str) -> bool: ...


class NoticesInProcess:
    """Ignored senders logged by this process (the local backend's; Redis shares them between gateways)."""

    def __init__(self) -> None:
        self._seen: set[tuple[str, str]] = set()

    def first(self, channel: str, sender: str) -> bool:
        """True the first time `sender` on `channel` is asked about."""
        if (channel, sender) in self._seen:
            return False
        self._seen.add((channel, sender))
        return True
