"""Long tool results in what the model sees: head and tail kept, a note in the middle; the session keeps all."""

from __future__ import annotations

from typing import Any

DEFAULT_TOOL_RESULT_CHARS = 16_000


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
