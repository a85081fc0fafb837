"""Remembering what was already handled, so nothing is answered or sent twice."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

RECENT_DELIVERIES = 1024  # platforms redeliver within minutes; the bus's journal dedupes for days behind this


@dataclass
class SeenIds:
    """A bounded memory of ids already handled, oldest forgotten first."""

    capacity: int = 4096
    _ids: OrderedDict[str, None] = field(default_factory=OrderedDict)

    def __contains__(self, key: object) -> bool:
        return key in self._ids

    def add(self, key: str) -> bool:
        """Remember `key`; False when it was already there."""
        if key in self._ids:
            self._ids.move_to_end(key)
            return False
        self._ids[key] = None
        if len(self._ids) > self.capacity:
            self._ids.popitem(last=False)
        return True
