"""Explicit cache breakpoints for providers that take them: the system prompt and the last tool definition."""

from __future__ import annotations

from typing import Any

_EPHEMERAL = {"type": "ephemeral"}
_EXPLICIT_PREFIXES = ("anthropic/", "openrouter/", "claude")


def takes_cache_breakpoints(model: str) -> bool:
    """Anthropic models and OpenRouter (through litellm) cache only what is marked."""
    return model.lower().startswith(_EXPLICIT_PREFIXES)


def mark_cache_breakpoints(request: dict[str, Any]) -> dict[str, Any]:
    """A copy of a litellm request with `cache_control` on the system prompt and on the last tool."""
    messages = list(request["messages"])
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        text = messages[0]["content"]
        messages[0] = {**messages[0], "content": [{"type": "text", "text": text, "cache_control": _EPHEMERAL}]}
    marked = {**request, "messages": messages}
    if tools := request.get("tools"):
        marked["tools"] = [*tools[:-1], {**tools[-1], "cache_control": _EPHEMERAL}]
    return marked
