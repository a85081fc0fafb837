"""Request bodies as compact UTF-8 JSON, each repeating part encoded once: tools, system prompt, history messages."""

from __future__ import annotations

from typing import Any

from bot.storage.compact_json import dumps

GENERATION_BYTES = 512 * 1024  # encoded history kept per generation, two at most: the windows of ten or more busy chats
ENTRY_OVERHEAD = 200  # a cached message's bytes beyond its JSON (the entry, its dict slot)


Entry = tuple[dict[str, Any], dict[str, Any], bytes]
"""A cached history message: the message, a copy of it when encoded (to see a change in place), its JSON."""


class BodyEncoder:
    """Encodes bodies; the tool list (the same list object while tools don't change) and an unchanged system
    message are encoded once and spliced in, and so is each history message that holds only text: a turn encodes
    its new messages, not the whole history again.

    A history message is reused by identity, and only while it still equals the copy kept when it was encoded (a
    message changed in place is encoded again); the cache keeps about two generations of `GENERATION_BYTES`."""

    def __init__(self, generation_bytes: int = GENERATION_BYTES) -> None:
        self._tools: tuple[Any, bytes] | None = None
        self._system: tuple[dict[str, Any], bytes] | None = None
        self._generation_bytes = generation_bytes
        self._recent: dict[int, Entry] = {}
        self._older: dict[int, Entry] = {}
        self._recent_bytes = 0

    @property
    def kept(self) -> int:
        """How many history messages the cache holds."""
        return len(self._recent.keys() | self._older.keys())

    def encode(self, body: dict[str, Any]) -> bytes:
        """The body as UTF-8 JSON bytes; equal to encoding it whole, up to key order."""
        rest = {key: value for key, value in body.items() if key not in ("messages", "tools")}
        fields = [dumps(rest)[1:-1].encode()] if rest else []
        if "messages" in body:
            fields.append(b'"messages":[' + b",".join(self._messages(body["messages"])) + b"]")
        if "tools" in body:
            fields.append(b'"tools":' + self._tool_list(body["tools"]))
        return b"{" + b",".join(fields) + b"}"

    def _tool_list(self, tools: Any) -> bytes:
        if self._tools is None or self._tools[0] is not tools:
            self._tools = (tools, dumps(tools).encode())
        return self._tools[1]

    def _messages(self, messages: list[dict[str, Any]]) -> list[bytes]:
        """The system prompt (a new dict each turn, so compared by value), the history from the cache, and the last
        message (the turn's own, made anew each turn and never seen again) encoded as it is."""
        if not messages:
            return []
        first = messages[0]
        if first.get("role") != "system":
            head = self._message(first) if len(messages) > 1 else dumps(first).encode()
        else:
            if self._system is None or self._system[0] != first:
                self._system = (first, dumps(first).encode())
            head = self._system[1]
        if len(messages) == 1:
            return [head]
        return [head, *map(self._message, messages[1:-1]), dumps(messages[-1]).encode()]

    def _message(self, message: dict[str, Any]) -> bytes:
        """One message's JSON: from the cache while it is the same object and equal to its copy kept when encoded."""
        key = id(message)
        entry = self._recent.get(key)
        if entry is not None:
            if entry[0] is message and entry[1] == message:
                return entry[2]
        elif (entry := self._older.get(key)) is not None and entry[0] is message and entry[1] == message:
            self._keep(key, entry)
            return entry[2]
        encoded = dumps(message).encode()
        if all(type(value) is str for value in message.values()):  # nested lists or dicts could change unseen
            self._keep(key, (message, message.copy(), encoded))
        return encoded

    def _keep(self, key: int, entry: Entry) -> None:
        self._recent[key] = entry
        self._recent_bytes += len(entry[2]) + ENTRY_OVERHEAD
        if self._recent_bytes > self._generation_bytes:
            self._older, self._recent, self._recent_bytes = self._recent, {}, 0
