"""Remembering what was already handled, so nothing is answered or sent twice."""

from __future__ import annotations

from bot.storage.recent import RecentMap

RECENT_DELIVERIES = 1024  # platforms redeliver within minutes; the bus's journal dedupes for days behind this
RECENT_DELIVERY_BYTES = 32 * 1024  # about 190 ids of a Telegram chat's message (the longer a platform's ids, the fewer)


class SeenIds:
    """A bounded memory of ids already handled, oldest forgotten first: at most `capacity` ids and `max_bytes`."""

    def __init__(self, capacity: int = 4096, max_bytes: int | None = None) -> None:
        self._ids: RecentMap[str, None] = RecentMap(capacity, max_bytes=max_bytes)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def add(self, key: str) -> bool:
        """Remember `key`; False when it was already there."""
        if key in self._ids:
            self._ids.touch(key)
            return False
        self._ids[key] = None
        return True
