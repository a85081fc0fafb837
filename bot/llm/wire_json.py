"""Encoding a chat request body, reusing the JSON of the parts that repeat call after call."""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    """Compact JSON with text kept as UTF-8 characters, as the request body carries it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class BodyEncoder:
    """Encodes bodies; the tool list (the same list object while tools don't change) and an unchanged system
    message are encoded once and spliced in, so a turn encodes only its history and new message."""

    def __init__(self) -> None:
        self._tools: tuple[Any, str] | None = None
        self._system: tuple[dict[str, Any], str] | None = None

    def encode(self, body: dict[str, Any]) -> bytes:
        """The body as UTF-8 JSON bytes; equal to encoding it whole, up to key order."""
        rest = {key: value for key, value in body.items() if key not in ("messages", "tools")}
        parts = [dumps(rest)[:-1]] if rest else ["{"]
        if "messages" in body:
            parts.append(f'"messages":{self._messages(body["messages"])}')
        if "tools" in body:
            parts.append(f'"tools":{self._tool_list(body["tools"])}')
        head, *fields = parts
        joined = ",".join(fields)
        separator = "," if rest and joined else ""
        return f"{head}{separator}{joined}}}".encode()

    def _tool_list(self, tools: Any) -> str:
        if self._tools is None or self._tools[0] is not tools:
            self._tools = (tools, dumps(tools))
        return self._tools[1]

    def _messages(self, messages: list[dict[str, Any]]) -> str:
        if not messages or messages[0].get("role") != "system":
            return dumps(messages)
        if self._system is None or self._system[0] != messages[0]:
            self._system = (messages[0], dumps(messages[0]))
        rest = dumps(messages[1:])
        return f"[{self._system[1]}]" if rest == "[]" else f"[{self._system[1]},{rest[1:]}"
