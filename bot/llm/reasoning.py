"""The model's reasoning kept apart from its reply: `<think>…</think>` blocks stripped, or streamed elsewhere."""

from __future__ import annotations

import re

from bot.llm.types import DeltaHandler

_THINK_BLOCK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL)


def strip_think(text: str) -> str:
    """Remove `<think>…</think>` reasoning blocks (an unclosed one runs to the end)."""
    return _THINK_BLOCK.sub("", text).strip() if "<think>" in text else text


def think_text(text: str) -> str:
    """The text inside `<think>…</think>` blocks (an unclosed one runs to the end), blocks apart by a blank line."""
    if "<think>" not in text:
        return ""
    blocks = (match.group(0).removeprefix("<think>").removesuffix("</think>") for match in _THINK_BLOCK.finditer(text))
    return "\n\n".join(block.strip() for block in blocks if block.strip())


def ignore(text: str) -> None:
    """Reasoning nobody asked for."""


def reasoning_handler(handler: DeltaHandler) -> DeltaHandler:
    """Where `handler` takes reasoning: its `reasoning` method when it is a `ReasoningSink`, else `ignore`.

    Decides as `isinstance(handler, ReasoningSink)` does (a method not set to None), without the cost of a
    runtime protocol check on every call.
    """
    sink = getattr(handler, "reasoning", None)
    return ignore if sink is None else sink


class ThinkFilter:
    """Streams text through, passing whatever sits inside `<think>…</think>` to `hidden` instead."""

    def __init__(self, emit: DeltaHandler, hidden: DeltaHandler = ignore) -> None:
        self._emit = emit
        self._hidden = hidden
        self._pending = ""
        self._inside = False

    def feed(self, chunk: str) -> None:
        """Take a chunk; emit the part that is certainly visible."""
        self._pending += chunk
        if self._pending and "<" not in self._pending:  # no tag starts here: all of it stays on its side
            (self._hidden if self._inside else self._emit)(self._pending)
            self._pending = ""
            return
        while self._pending:
            tag = "</think>" if self._inside else "<think>"
            index = self._pending.find(tag)
            if index >= 0:
                if index:
                    (self._hidden if self._inside else self._emit)(self._pending[:index])
                self._pending = self._pending[index + len(tag) :]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._pending, tag)
            visible = self._pending[: len(self._pending) - keep]
            if visible:
                (self._hidden if self._inside else self._emit)(visible)
            self._pending = self._pending[len(visible) :]
            return

    def flush(self) -> None:
        """The stream ended: emit text held back as a possible tag start, unless inside a think block."""
        if self._pending and not self._inside:
            self._emit(self._pending)
        self._pending = ""


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-size:]):
            return size
    return 0


REASONING_FIELDS = ("reasoning_content", "reasoning", "thinking")


def reasoning_of(part: object) -> str:
    """The reasoning a message or a stream delta carries, in whichever field the server uses for it.

    litellm keeps fields it does not know in `provider_specific_fields` (a message's `thinking`); it drops them
    from stream deltas, so a streamed `thinking` reaches only the direct path.
    """
    extra = getattr(part, "provider_specific_fields", None)
    for name in REASONING_FIELDS:
        value = getattr(part, name, None) or (extra.get(name) if isinstance(extra, dict) else None)
        if isinstance(value, str) and value:
            return value
    return ""
