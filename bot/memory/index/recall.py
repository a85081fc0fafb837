"""The memory index as the recall tool reads it: the best passages of a scope, rendered with dates, and after them
further hits within the same budget (a question that spans several conversations has its answers further down)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.memory.index.query import parse_query
from bot.memory.index.ranking import Shown
from bot.memory.index.rendering import render_window
from bot.memory.index.scopes import MemoryIndexes

RESULTS = 5
FURTHER = 7  # windows after the five at most, as far as the budget holds: the rest of a spread-out answer
REACH = 1  # exchanges on each side of a hit: the reply's sequel or lead-in; further ones pay less than another hit
WINDOW_CHARS = 1000  # of one window at most
RESULT_CHARS = 7600  # of all of them: within 8,000 with the tool's own wording


@dataclass(frozen=True, slots=True)
class Recalled:
    """What a recall found: the best passages (and the summary beside them), then further hits, best first."""

    best: tuple[str, ...]
    further: tuple[str, ...] = ()


class IndexRecall:
    """What the recall tool searches through (`bot.tools.recall.MemorySearch`)."""

    def __init__(self, indexes: MemoryIndexes, timezone: str, results: int = RESULTS, further: int = FURTHER) -> None:
        self._indexes = indexes
        self._zone = ZoneInfo(timezone)
        self._results = results
        self._further = further

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
    ) -> Recalled:
        """The best passages (five by default), each with its date, speaker and the exchanges around it, the best
        summary beside them; then up to `further` more windows, as many as RESULT_CHARS holds in all."""
        shown = Shown(session_key, shown_from) if shown_from is not None else None
        join = session_key or None
        hits = await self._indexes.search(
            directory,
            query,
            self._results + self._further,
            since,
            until,
            shown,
            join=join,
            window_chars=(WINDOW_CHARS, RESULT_CHARS),
            follow=True,
            reach=REACH,
        )
        best: list[str] = []
        further: list[str] = []
        windows = 0
        for hit in hits:
            exchange = hit.stored.passage.kind == "exchange"
            (best if windows < self._results or not exchange else further).append(render_window(hit, self._zone))
            windows += exchange
        return Recalled(tuple(best), tuple(further))
