"""What the memory index holds: a chat's messages as exchanges, HISTORY.md's entries and MEMORY.md's facts.

Only what people and the assistant said is kept: tool calls and results, and blocks recalled into a
prompt, never count as things the chat said.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.sessions.logs import LogEntry

RECALL_HEADING = "From earlier conversations"
MESSAGE_CHARS = 8000  # of one message, indexed; longer ones are cut
_HEADER = re.compile(r"^\[(?P<head>[^\]\n]*)\]\n?")
_LATER_HEADERS = re.compile(r"^\[[^\]\n]* · [^\]\n]*\]\n?", re.MULTILINE)  # a batch's later messages' headers
_FROM = re.compile(r"· from (?P<who>.+?)(?: \([^()]*\))? ·")
_RECALLED = re.compile(rf"^\[{RECALL_HEADING}[^\n]*\n.*?\n\[end of recalled passages\]\n*", re.DOTALL)
_ENTRY = re.compile(r"^\[(\d{4}-\d{2}-\d{2})(?: (\d{2}:\d{2}))?[^\]]*\]\s*", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True, slots=True)
class Passage:
    """One searchable piece of a scope's past: an exchange, a HISTORY.md entry or a MEMORY.md fact."""

    kind: str  # "exchange", "entry" or "fact"
    ts: float
    speaker: str
    asked: str  # the user's message, the entry, or the fact
    answered: str = ""  # the reply to the message, or the heading a fact sits under
    first: int = 0  # the number of the exchange's first message in its log


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage as the index holds it, with where it came from."""

    id: int
    session: str
    log: str
    passage: Passage


@dataclass(slots=True)
class ExchangePart:
    """An exchange read from log entries; `opens` is False for replies continuing the exchange before them."""

    opens: bool
    first: int
    ts: float
    speaker: str
    asked: str
    replies: list[str] = field(default_factory=list)


def message_text(message: dict[str, Any]) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    content = message.get("content")
    if isinstance(content, list):
        parts = (p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return "\n".join(part for part in parts if isinstance(part, str))
    return content if isinstance(content, str) else ""


def spoken(text: str) -> tuple[str, str]:
    """(speaker, text) of a stored user message: its runtime header read for the sender and left out."""
    text = _RECALLED.sub("", text)
    match = _HEADER.match(text)
    if match is None:
        return "user", text.strip()
    head = match.group("head")
    who = _FROM.search(head + " ·")
    speaker = "system" if head.startswith("system message") else (who.group("who") if who else "user")
    return speaker, _LATER_HEADERS.sub("", text[match.end() :]).strip()


def exchange_parts(entries: Iterable[LogEntry]) -> list[ExchangePart]:
    """The entries as exchanges: each user message with the assistant's text replies after it."""
    parts: list[ExchangePart] = []
    for entry in entries:
        role = entry.message.get("role")
        if role == "user":
            speaker, text = spoken(message_text(entry.message))
            parts.append(ExchangePart(True, entry.n, entry.ts, speaker, text[:MESSAGE_CHARS]))
        elif role == "assistant":
            text = message_text(entry.message).strip()
            if not text:
                continue  # only tool calls
            if not parts:
                parts.append(ExchangePart(False, entry.n, entry.ts, "", ""))
            parts[-1].replies.append(text[:MESSAGE_CHARS])
    return parts


def history_entries(text: str, zone: ZoneInfo) -> Iterator[Passage]:
    """Each dated entry of HISTORY.md text (`[YYYY-MM-DD HH:MM] text`)."""
    starts = list(_ENTRY.finditer(text))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[start.end() : end].strip()
        if body:
            when = datetime.fromisoformat(f"{start.group(1)} {start.group(2) or '00:00'}").replace(tzinfo=zone)
            yield Passage("entry", when.timestamp(), "history", body[:MESSAGE_CHARS])


def memory_facts(text: str, ts: float) -> Iterator[Passage]:
    """Each line of MEMORY.md (a bullet or a sentence) as a fact, with the heading above it."""
    heading = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
            continue
        fact = _BULLET.sub("", stripped)
        if len(fact) > 2:
            yield Passage("fact", ts, "memory", fact[:MESSAGE_CHARS], heading)
