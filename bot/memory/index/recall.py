"""The memory index as the recall tool reads it: the best passages of a scope, rendered with dates."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.memory.index.query import parse_query
from bot.memory.index.ranking import Shown
from bot.memory.index.rendering import render_window
from bot.memory.index.scopes import MemoryIndexes

RESULTS = 5
WINDOW_CHARS = 2000  # of one result at most
RESULT_CHARS = 7600  # of all of them: within 8,000 with the tool's own wording


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
        hits = await self._indexes.search(
            directory,
            query,
            self._results,
            since,
            until,
            shown,
            join=join,
            window_chars=(WINDOW_CHARS, RESULT_CHARS),
            follow=True,
        )
        return [render_window(hit, self._zone) for hit in hits]
