"""What a chat completion request the fake model received carried: the users' texts and the tools offered."""

from __future__ import annotations

from typing import Any


def user_texts(request: dict[str, Any]) -> list[str]:
    """The content of each user message, in order."""
    return [message["content"] for message in request["messages"] if message["role"] == "user"]


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools offered, in order (none when the request offered no tools)."""
    return [tool["function"]["name"] for tool in request.get("tools") or []]
