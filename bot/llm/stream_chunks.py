"""A stream chunk read into what the provider folds into an answer, from either transport's shape of it.

litellm's chunks are objects read by attribute; the direct path's are the plain dicts `json.loads` makes,
read by key (a chunk is read on every token, so neither shape is converted into the other).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from bot.llm.reasoning import REASONING_FIELDS, reasoning_of
from bot.llm.types import Usage

# A delta with only these keys (most of them) carries no reasoning.
_PLAIN_DELTA_KEYS = frozenset({"role", "content", "tool_calls", "refusal"})


class ToolFragment(NamedTuple):
    """A piece of one tool call: its id and name arrive once, its arguments in pieces."""

    call_index: int
    id: str
    name: str
    arguments: str


class StreamDelta(NamedTuple):
    """What one chunk adds: text, reasoning, tool call pieces, a finish reason, the usage (the last chunk)."""

    content: str
    reasoning: str
    tool_calls: tuple[ToolFragment, ...]
    finish_reason: str | None
    usage: Usage | None


def usage_of(usage: Any) -> Usage:
    """Token counts from litellm's usage object (or the direct path's, read by attribute); empty for None."""
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or getattr(usage, "cache_read_input_tokens", None) or 0
    return Usage(
        int(getattr(usage, "prompt_tokens", 0) or 0), int(getattr(usage, "completion_tokens", 0) or 0), int(cached)
    )


def litellm_delta(chunk: Any) -> StreamDelta:
    """A litellm stream chunk (`ModelResponseStream`), read by attribute."""
    raw_usage = getattr(chunk, "usage", None)
    usage = usage_of(raw_usage) if raw_usage else None
    if not chunk.choices:
        return StreamDelta("", "", (), None, usage)
    choice = chunk.choices[0]
    delta = choice.delta
    fragments = tuple(
        ToolFragment(
            fragment.index or 0,
            fragment.id or "",
            (fragment.function.name or "") if fragment.function else "",
            (fragment.function.arguments or "") if fragment.function else "",
        )
        for fragment in delta.tool_calls or ()
    )
    return StreamDelta(delta.content or "", reasoning_of(delta), fragments, choice.finish_reason, usage)


def wire_delta(chunk: dict[str, Any]) -> StreamDelta:
    """A chunk of the direct path, the JSON object of one server-sent event, read by key."""
    raw_usage = chunk.get("usage")
    usage = _wire_usage(raw_usage) if raw_usage else None
    choices = chunk.get("choices")
    if not choices:
        return StreamDelta("", "", (), None, usage)
    choice = choices[0]
    delta = choice.get("delta") or {}
    fragments: tuple[ToolFragment, ...] = ()
    if calls := delta.get("tool_calls"):
        fragments = tuple(_wire_fragment(call) for call in calls)
    reasoning = "" if delta.keys() <= _PLAIN_DELTA_KEYS else _wire_reasoning(delta)
    return StreamDelta(delta.get("content") or "", reasoning, fragments, choice.get("finish_reason"), usage)


def _wire_fragment(call: dict[str, Any]) -> ToolFragment:
    function = call.get("function") or {}
    return ToolFragment(
        call.get("index") or 0, call.get("id") or "", function.get("name") or "", function.get("arguments") or ""
    )


def _wire_reasoning(delta: dict[str, Any]) -> str:
    """`reasoning_of` for a delta read by key."""
    extra = delta.get("provider_specific_fields")
    for name in REASONING_FIELDS:
        value = delta.get(name) or (extra.get(name) if isinstance(extra, dict) else None)
        if isinstance(value, str) and value:
            return value
    return ""


def _wire_usage(usage: dict[str, Any]) -> Usage:
    details = usage.get("prompt_tokens_details")
    cached = (details.get("cached_tokens") if isinstance(details, dict) else None) or usage.get(
        "cache_read_input_tokens"
    )
    return Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0), int(cached or 0))
