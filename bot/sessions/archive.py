"""Reading back a chat's archived sessions (what /new set aside): dated messages for recall, summaries for /sessions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ARCHIVED_SUFFIX = ".archived.jsonl"
PRUNED_STAMP = ".pruned"  # rewritten in the sessions folder whenever retention deletes archives (indexes then look)
FIRST_WORDS = 60


@dataclass(frozen=True, slots=True)
class ArchivedSession:
    """A session /new set aside: its id in the store, when it was last active, how it began, how large it is."""

    id: str
    last_active: float
    first_words: str
    messages: int
    size: int


def summarise(archive_id: str, records: list[dict[str, Any]], size: int, last_active: float) -> ArchivedSession:
    """An archived session's summary from its records; `last_active` stands in when no message has a time."""
    said = text_messages(records)
    asked = next((text for _, role, text in said if role == "user"), "")
    when = max((at for at, _, _ in said), default=0.0) or last_active
    count = sum(1 for record in records if record.get("type", "message") == "message")
    return ArchivedSession(archive_id, when, first_words(asked), count, size)


def first_words(text: str) -> str:
    """The start of a user's message, without the header line relaybot adds (`[telegram DM 42 · …]`)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("[") and lines[0].endswith("]"):
        lines = lines[1:]
    words = " ".join(" ".join(lines).split())
    return words if len(words) <= FIRST_WORDS else words[: FIRST_WORDS - 1] + "…"


def text_messages(records: Iterable[dict[str, Any]]) -> list[tuple[float, str, str]]:
    """(timestamp, role, text) of the user and assistant messages with text among session records.

    Local records carry `type: message` beside other kinds; Redis log records are all messages, without a type.
    """
    found = []
    for record in records:
        message = record.get("message") if record.get("type", "message") == "message" else None
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        if isinstance(content, str) and content.strip():
            found.append((float(record.get("ts") or 0.0), str(message["role"]), content))
    return found


def records_of(path: Path) -> Iterable[dict[str, Any]]:
    """The records of a session file; a torn line is skipped."""
    return _records(path)


def _records(path: Path) -> Iterable[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn line
        if isinstance(record, dict):
            yield record
