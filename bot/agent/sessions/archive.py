"""Reading back a chat's archived sessions (what /new set aside) as plain dated messages, for recall."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

ARCHIVED_SUFFIX = ".archived.jsonl"


def belongs_to(session_key: str, chat_key: str) -> bool:
    """Whether a session (the chat itself or one of its threads) belongs to `channel:chat_id`."""
    return session_key == chat_key or session_key.startswith(chat_key + ":")


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


def archived_file_messages(directory: Path, chat_key: str) -> list[tuple[float, str, str]]:
    """The messages of every archived session file of the chat and its threads, oldest archive first."""
    found: list[tuple[float, str, str]] = []
    for path in sorted(directory.glob(quote(chat_key, safe="") + "*" + ARCHIVED_SUFFIX)):
        key = unquote(path.name.removesuffix(ARCHIVED_SUFFIX).rsplit(".", 1)[0])
        if belongs_to(key, chat_key):
            found += text_messages(_records(path))
    return found


def _records(path: Path) -> Iterable[dict[str, Any]]:
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a torn line
        if isinstance(record, dict):
            yield record
