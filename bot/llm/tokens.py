"""Counting tokens cheaply, without a tokenizer: characters / 3, images at a flat rate."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from operator import is_
from typing import Any

from bot.storage.recent import RecentMap

CHARS_PER_TOKEN = 3
IMAGE_TOKENS = 1000
MESSAGE_OVERHEAD = 4
RUNS_KEPT = 64  # conversations whose history's estimates are kept: the chats busy lately
RUN_BYTES = 512 * 1024  # of their messages' copies (about 300 bytes a message): the windows of ten or more busy chats
KEPT_MESSAGE_BYTES = 300


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


class KeptEstimates:
    """`estimate_each` of a conversation's history, kept between turns: a history that starts with the messages last
    counted, unchanged, counts only the ones added since. A run is looked up by its first message and holds
    messages of text alone, each with a copy taken when counted (a message changed in place is counted again)."""

    def __init__(self, runs: int = RUNS_KEPT, max_bytes: int = RUN_BYTES) -> None:
        self._runs: RecentMap[int, tuple[list[dict[str, Any]], list[dict[str, Any]], list[int]]] = RecentMap(
            runs, weight=lambda run: len(run[0]) * KEPT_MESSAGE_BYTES, max_weight=max_bytes
        )

    @property
    def kept(self) -> int:
        """How many messages the runs hold."""
        return sum(len(self._runs[key][0]) for key in self._runs)

    def each(self, history: list[dict[str, Any]]) -> list[int]:
        """The estimate of each message, in order."""
        if not history:
            return []
        key = id(history[0])
        run = self._runs.get(key)
        done = 0
        if run is not None:
            counted = len(run[0])
            if counted <= len(history) and all(map(is_, run[0], history)) and run[1] == history[:counted]:
                done = counted
        estimates = (run[2] if run is not None and done else []) + estimate_each(history[done:])
        plain = next((i for i in range(done, len(history)) if not _text_alone(history[i])), len(history))
        if plain > done:
            copies = [*(run[1] if run is not None and done else ()), *(m.copy() for m in history[done:plain])]
            self._runs[key] = (history[:plain], copies, estimates[:plain])
        return estimates


def _text_alone(message: Mapping[str, Any]) -> bool:
    """Whether a message holds only strings (a list or dict inside could change unseen by a shallow copy)."""
    return all(type(value) is str for value in message.values())
