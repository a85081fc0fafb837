"""Remembering what was already handled, so nothing is answered or sent twice."""

from __future__ import annotations

from bot.storage.recent import RecentMap

RECENT_DELIVERIES = 1024  # platforms redeliver within minutes; the bus's journal dedupes for days behind this


class SeenIds:
    """A bounded memory of ids already handled, oldest forgotten first."""

    def __init__(self, capacity: int = 4096) -> None:
        self._ids: RecentMap[str, None] = RecentMap(capacity)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def add(self, key: str) -> bool:
        """Remember `key`; False when it was already there."""
        if key in self._ids:
            self._ids.touch(key)
            return False
        self._ids[key] = None
        return True
