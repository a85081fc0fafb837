"""The memory index as the recall tool reads it: the best passages of a scope, rendered with dates."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.memory.index.query import parse_query
from bot.memory.index.ranking import Shown
from bot.memory.index.rendering import render_hit
from bot.memory.index.scopes import MemoryIndexes

RESULTS = 5
ASKED_CHARS = 1200
ANSWERED_CHARS = 600


class IndexRecall:
    """What the recall tool searches through (`bot.tools.recall.MemorySearch`)."""

    def __init__(self, indexes: MemoryIndexes, timezone: str, results: int = RESULTS) -> None:
        self._indexes = indexes
        self._zone = ZoneInfo(timezone)
        self._results = results

    def searchable(self, query: str) -> bool:
        """Whether the query keeps any word once question and stop words are dropped."""
        return bool(parse_query(query, datetime.now(self._zone)).words)

    async def recall(
        self,
        directory: Path,
        query: str,
        session_key: str,
        shown_from: int | None,
        since: float | None,
        until: float | None,
    ) -> list[str]:
        """The best passages (five by default), each with its date, speaker and the exchange it belongs to."""
        shown = Shown(session_key, shown_from) if shown_from is not None else None
        join = session_key or None
        hits = await self._indexes.search(directory, query, self._results, since, until, shown, join=join)
        return [render_hit(hit, self._zone, ASKED_CHARS, ANSWERED_CHARS) for hit in hits]
