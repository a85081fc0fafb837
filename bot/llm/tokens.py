"""Counting tokens cheaply, without a tokenizer: characters / 3, images at a flat rate."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

CHARS_PER_TOKEN = 3
IMAGE_TOKENS = 1000
MESSAGE_OVERHEAD = 4


def estimate_tokens(message: Mapping[str, Any]) -> int:
    """A cheap estimate of a chat message's tokens: characters / 3, images at a flat rate."""
    content = message.get("content")
    if content.__class__ is str and "tool_calls" not in message:  # most messages: text alone
        return len(content) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD
    chars = 0
    images = 0
    if isinstance(content, str):
        chars += len(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                chars += len(part.get("text") or "")
            else:
                images += 1
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        chars += len(function.get("name") or "") + len(function.get("arguments") or "")
    return chars // CHARS_PER_TOKEN + images * IMAGE_TOKENS + MESSAGE_OVERHEAD


def estimate_each(messages: Iterable[Mapping[str, Any]]) -> list[int]:
    """`estimate_tokens` of each message, in one pass: a message of text alone is counted inline."""
    return [
        len(content) // CHARS_PER_TOKEN + MESSAGE_OVERHEAD
        if (content := message.get("content")).__class__ is str and "tool_calls" not in message
        else estimate_tokens(message)
        for message in messages
    ]


def estimate_tool_tokens(tools: list[dict[str, Any]] | None) -> int:
    """A cheap estimate of the tokens of a request's tool definitions (0 without tools)."""
    return len(json.dumps(tools)) // CHARS_PER_TOKEN if tools else 0
