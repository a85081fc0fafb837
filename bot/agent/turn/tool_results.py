"""Long tool results in what the model sees: head and tail kept, a note in the middle; the session keeps all."""

from __future__ import annotations

from typing import Any

DEFAULT_TOOL_RESULT_CHARS = 16_000
EARLIER_RECALL_CHARS = 1200  # a recall result of an earlier turn, as the prompt's history shows it


def clip_text(text: str, limit: int) -> str:
    """`text` if it fits `limit`, else its head and tail around a note saying how much was left out."""
    if len(text) <= limit:
        return text
    note_room = 80
    keep = max(0, limit - note_room)
    head, tail = keep * 2 // 3, keep // 3
    omitted = len(text) - head - tail
    return f"{text[:head]}\n\n[… {omitted:,} characters cut from this tool result …]\n\n{text[len(text) - tail :]}"


def clip_tool_message(message: dict[str, Any], limit: int) -> dict[str, Any]:
    """A tool message with its content clipped; other messages unchanged (the same object)."""
    content = message.get("content")
    if message.get("role") != "tool" or not isinstance(content, str) or len(content) <= limit:
        return message
    return {**message, "content": clip_text(content, limit)}


def shorten_earlier_recall(message: dict[str, Any]) -> dict[str, Any]:
    """A recall result from an earlier turn cut to EARLIER_RECALL_CHARS at a line or word end; others unchanged."""
    content = message.get("content")
    if message.get("name") != "recall" or not isinstance(content, str) or len(content) <= EARLIER_RECALL_CHARS:
        return message
    head = content[:EARLIER_RECALL_CHARS]
    at = head.rfind("\n")
    if at < EARLIER_RECALL_CHARS // 2:
        at = head.rfind(" ")  # no line end late enough: a word end
    kept = head[:at] if at >= EARLIER_RECALL_CHARS // 2 else head
    return {**message, "content": f"{kept.rstrip()} […recall result shortened; search again for more]"}
