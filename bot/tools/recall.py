"""The recall tool: a ranked keyword search of the current chat's own memory scope, and nothing else."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext
from bot.tools.recall_index import Found, Passage, best_passages

_ENTRY = re.compile(r"^\[(\d{4}-\d{2}-\d{2})[^\]]*\]\s*", re.MULTILINE)
EXCHANGE_CHARS = 4000


class SessionArchive(Protocol):
    """Archived (reset with /new) sessions of one chat, as (timestamp, role, text) messages in order."""

    def archived_messages(self, chat_key: str) -> list[tuple[float, str, str]]: ...


class RecallTool(Tool):
    """Searches HISTORY.md and the chat's archived sessions; never another chat's memory."""

    name = "recall"
    read_only = True
    for_everyone = True
    description = (
        "Search this chat's own long-term history (summaries of past conversations and earlier sessions) "
        "for keywords. Returns the five best matches with their dates. Use it when the user refers to "
        "something from before that is not in the conversation."
    )
    parameters = {
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1, "description": "Keywords to look for."}},
        "required": ["query"],
    }

    def __init__(self, archive: SessionArchive | None, timezone: str = "UTC") -> None:
        self._archive = archive
        self._zone = ZoneInfo(timezone)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if ctx.memory_dir is None:
            raise ToolError("this conversation has no long-term memory to search.")
        query = str(args["query"])
        found = await asyncio.to_thread(self._search, ctx.memory_dir, ctx.chat.channel, ctx.chat.chat_id, query)
        if not found:
            return f"Nothing in this chat's history matches {query!r}."
        lines = [f"Best matches in this chat's history for {query!r}:"]
        lines += [f"{n}. {hit.date} ({hit.source}): {hit.excerpt}" for n, hit in enumerate(found, 1)]
        return "\n".join(lines)

    def _search(self, directory: Path, channel: str, chat_id: str, query: str) -> list[Found]:
        passages = [*history_passages(directory / "HISTORY.md")]
        if self._archive is not None:
            messages = self._archive.archived_messages(f"{channel}:{chat_id}")
            passages += exchange_passages(messages, self._zone)
        return best_passages(passages, query)


def history_passages(path: Path) -> Iterator[Passage]:
    """Each dated entry of a HISTORY.md (`[YYYY-MM-DD HH:MM] text`), as a passage."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    starts = list(_ENTRY.finditer(text))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        yield Passage(start.group(1), "history", text[start.end() : end].strip())


def exchange_passages(messages: list[tuple[float, str, str]], zone: ZoneInfo) -> Iterator[Passage]:
    """Each user message with the replies up to the next one, dated by the user message."""
    when: float | None = None
    parts: list[str] = []
    for ts, role, text in [*messages, (0.0, "user", "")]:
        if role == "user":
            if when is not None and parts:
                day = datetime.fromtimestamp(when, zone).strftime("%Y-%m-%d")
                yield Passage(day, "earlier session", "\n".join(parts)[:EXCHANGE_CHARS])
            when, parts = ts, []
        if text:
            parts.append(f"{role}: {text}")
