"""The recall tool: a ranked search of the current chat's own memory scope, and nothing else."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext

FURTHER_HEADING = "More mentions, further down the ranking:"


class Recalled(Protocol):
    """What a search found: the best passages, numbered when shown, then further hits."""

    @property
    def best(self) -> Sequence[str]:
        """The best passages, best first, each with its date and who spoke."""

    @property
    def further(self) -> Sequence[str]:
        """Hits further down the ranking, best first."""


class MemorySearch(Protocol):
    """The memory index as the recall tool searches it."""

    def searchable(self, query: str) -> bool:
        """Whether the query has words to search for (not only question and stop words)."""

    async def recall(
        self,
        directory: Path,
        query: str,
        session_key: str,
        shown_from: int | None,
        since: float | None,
        until: float | None,
    ) -> Recalled:
        """The best passages of the scope folder for `query`, each with its date and who spoke, best first, then
        further hits; the session's messages from `shown_from` on (already in the prompt) left out."""


class RecallTool(Tool):
    """Searches every message, summary and fact of this chat's memory scope; never another chat's memory."""

    name = "recall"
    read_only = True
    for_everyone = True
    description = (
        "Search this chat's own memory: every earlier message (also those no longer in the conversation), "
        "summaries and saved facts. Returns the five best passages with their dates, and beside them the "
        "conversation summary that matches best; then, as space allows, more mentions further down the ranking."
    )
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in words."},
            "since": {
                "type": "string",
                "format": "date",
                "description": "Only passages from this day on (YYYY-MM-DD).",
            },
            "until": {"type": "string", "format": "date", "description": "Only passages up to this day (YYYY-MM-DD)."},
        },
        "required": ["query"],
    }

    def __init__(self, memory: MemorySearch, timezone: str = "UTC") -> None:
        self._memory = memory
        self._zone = ZoneInfo(timezone)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if ctx.memory_dir is None:
            raise ToolError("this conversation has no long-term memory to search.")
        query = str(args["query"]).strip()
        since = self._day(args.get("since"), "since")
        until = self._day(args.get("until"), "until")
        if since is not None and until is not None and since > until:
            raise ToolError("`since` is after `until`.")
        if not self._memory.searchable(query):
            return (
                f"{query!r} has no words to search for: only question and common words. Name what to look "
                "for: a person, place, thing or topic."
            )
        found = await self._memory.recall(
            ctx.memory_dir,
            query,
            ctx.session_key,
            ctx.shown_from,
            since,
            until + 86400.0 if until is not None else None,
        )
        if not found.best:
            return (
                f"Nothing in this chat's memory matches {query!r}. Search with the words the user would have "
                "used (names, places, things), not only question words."
            )
        lines = [f"Best matches in this chat's memory for {query!r}:"]
        lines += [f"{n}. {text}" for n, text in enumerate(found.best, 1)]
        if found.further:
            lines += [FURTHER_HEADING, *(f"- {text}" for text in found.further)]
        return "\n".join(lines)

    def _day(self, value: Any, name: str) -> float | None:
        if value in (None, ""):
            return None
        try:
            day = datetime.strptime(str(value), "%Y-%m-%d").replace(tzinfo=self._zone)
        except ValueError:
            raise ToolError(f"`{name}` must be a date such as 2026-03-05, not {value!r}.") from None
        return day.timestamp()
