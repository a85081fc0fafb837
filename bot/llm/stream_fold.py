"""A streamed answer folded together as its chunks arrive, from either transport's shape of them."""

from __future__ import annotations

from typing import Any

from bot.llm.reasoning import ThinkFilter
from bot.llm.stream_chunks import StreamDelta, litellm_delta, wire_delta
from bot.llm.types import DeltaHandler, ToolCall, Usage, parsed_call

# A direct-path delta with only these keys carries text at most: no reasoning, no tool call pieces.
_TEXT_KEYS = frozenset({"role", "content", "refusal"})
_NO_DELTA: dict[str, Any] = {}


class StreamFold:
    """Shows text as it arrives (`<think>` blocks go to `reasoning`), passes reasoning on, joins tool call pieces,
    and keeps the last finish reason and usage."""

    def __init__(self, show: DeltaHandler, reasoning: DeltaHandler) -> None:
        self._visible = ThinkFilter(show, reasoning)
        self._reasoning = reasoning
        self._text: list[str] = []
        self._parts: dict[int, dict[str, str]] = {}
        self.finish_reason = "stop"
        self.usage = Usage()

    def wire(self, batch: list[dict[str, Any]]) -> None:
        """Fold direct-path chunks that arrived at once; their text is shown in one piece.

        A chunk with text only (most of them) is read in place; any other goes through `wire_delta`.
        """
        shown: list[str] = []
        text = self._text
        for chunk in batch:
            choices = chunk.get("choices")
            if choices and not chunk.get("usage"):
                choice = choices[0]
                delta = choice.get("delta") or _NO_DELTA
                if delta.keys() <= _TEXT_KEYS and not choice.get("finish_reason"):
                    if content := delta.get("content"):
                        text.append(content)
                        shown.append(content)
                    continue
            self._add(wire_delta(chunk), shown)
        if shown:
            self._visible.feed("".join(shown))

    def litellm(self, chunk: Any) -> None:
        """Fold one litellm chunk."""
        shown: list[str] = []
        self._add(litellm_delta(chunk), shown)
        if shown:
            self._visible.feed("".join(shown))

    def _add(self, delta: StreamDelta, shown: list[str]) -> None:
        """Take one chunk's delta; text joins `shown`, which is shown first when reasoning comes between."""
        if delta.usage is not None:
            self.usage = delta.usage
        self.finish_reason = delta.finish_reason or self.finish_reason
        if delta.reasoning:
            if shown:
                self._visible.feed("".join(shown))
                shown.clear()
            self._reasoning(delta.reasoning)
        if delta.content:
            self._text.append(delta.content)
            shown.append(delta.content)
        for fragment in delta.tool_calls:
            part = self._parts.setdefault(fragment.call_index, {"id": "", "name": "", "arguments": ""})
            part["id"] = fragment.id or part["id"]
            part["name"] = fragment.name or part["name"]
            part["arguments"] += fragment.arguments

    def flush(self) -> None:
        """The stream ended: show text held back as a possible tag start."""
        self._visible.flush()

    def text(self) -> str:
        """All the text so far, `<think>` blocks included."""
        return "".join(self._text)

    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls so far, in index order, their arguments parsed."""
        return tuple(
            parsed_call(part["id"] or f"call_{index}", part["name"], part["arguments"])
            for index, part in sorted(self._parts.items())
        )
