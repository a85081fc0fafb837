"""Ignore notices: a sender the bot ignores is logged once, not at every message."""

from __future__ import annotations

from collections import OrderedDict
from typing import Protocol

MAX_REMEMBERED = 10_000  # ignored senders remembered; one forgotten is logged again when it writes again


class IgnoreNotices(Protocol):
    """Remembers which ignored senders were already logged, so each is logged once."""

    def first(self, channel: str, sender: str) -> bool: ...


class NoticesInProcess:
    """Ignored senders logged by this process (the local backend's; Redis shares them between gateways)."""

    def __init__(self) -> None:
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()

    def first(self, channel: str, sender: str) -> bool:
        """True the first time `sender` on `channel` is asked about (among the MAX_REMEMBERED asked about last)."""
        key = (channel, sender)
        if key in self._seen:
            self._seen.move_to_end(key)
            return False
        self._seen[key] = None
        if len(self._seen) > MAX_REMEMBERED:
            self._seen.popitem(last=False)
        return True
