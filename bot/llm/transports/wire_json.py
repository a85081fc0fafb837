"""Request bodies as compact UTF-8 JSON, each repeating part encoded once: tools, system prompt, history messages."""

from __future__ import annotations

from dataclasses import dataclass
from operator import is_
from typing import Any

from bot.storage.compact_json import dumps
from bot.storage.recent import RecentMap

GENERATION_BYTES = 512 * 1024  # encoded history kept per generation, two at most: the windows of ten or more busy chats
ENTRY_OVERHEAD = 200  # a cached message's bytes beyond its JSON (the entry, its dict slot)
RUN_BYTES = 512 * 1024  # encoded history runs kept (one a conversation): the windows of ten or more busy chats
RUNS_KEPT = 64
SYSTEMS_KEPT = 32  # system prompts kept encoded: one a chat with a memory of its own, for the chats busy lately
SYSTEM_BYTES = 256 * 1024  # of their text and JSON


Entry = tuple[dict[str, Any], dict[str, Any], bytes]
"""A cached history message: the message, a copy of it when encoded (to see a change in place), its JSON."""


@dataclass(frozen=True, slots=True)
class _Run:
    """A conversation's history as last encoded: its messages, their copies then, and their JSON joined."""

    messages: list[dict[str, Any]]
    copies: list[dict[str, Any]]
    encoded: bytes

    @property
    def weight(self) -> int:
        """About the bytes it holds beyond the messages themselves."""
        return len(self.encoded) + ENTRY_OVERHEAD * len(self.messages)


class BodyEncoder:
    """Encodes bodies; the tool list (the same list object while tools don't change) and each chat's system
    message (by its text) are encoded once and spliced in, and so is each history message that holds only text: a
    turn encodes its new messages, not the whole history again. A conversation's history as last sent is kept
    joined (a run, looked up by its first message): a turn that only added to it checks it in two C-level passes,
    not message by message.

    A history message is reused by identity, and only while it still equals the copy kept when it was encoded (a
    message changed in place is encoded again); the cache keeps about two generations of `GENERATION_BYTES`."""

    def __init__(self, generation_bytes: int = GENERATION_BYTES) -> None:
        self._tools: tuple[Any, bytes] | None = None
        self._systems: RecentMap[str, bytes] = RecentMap(
            SYSTEMS_KEPT, weight=lambda encoded: 2 * len(encoded), max_weight=SYSTEM_BYTES
        )
        self._generation_bytes = generation_bytes
        self._recent: dict[int, Entry] = {}
        self._older: dict[int, Entry] = {}
        self._recent_bytes = 0
        self._runs: RecentMap[int, _Run] = RecentMap(RUNS_KEPT, weight=lambda run: run.weight, max_weight=RUN_BYTES)

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
        """The system prompt (a new dict each turn, so kept by its text), the history from the cache, and the last
        message (the turn's own, made anew each turn and never seen again) encoded as it is."""
        if not messages:
            return []
        first = messages[0]
        if first.get("role") != "system":
            head = self._message(first) if len(messages) > 1 else dumps(first).encode()
        else:
            head = self._system(first)
        if len(messages) == 1:
            return [head]
        if len(messages) == 2:
            return [head, dumps(messages[-1]).encode()]
        return [head, self._history(messages[1:-1]), dumps(messages[-1]).encode()]

    def _system(self, message: dict[str, Any]) -> bytes:
        """A system message's JSON, kept by its text (the prompt of each chat with a memory of its own differs)."""
        content = message.get("content")
        if message.keys() != {"role", "content"} or type(content) is not str:
            return dumps(message).encode()
        encoded = self._systems.get(content)
        if encoded is None:
            encoded = self._systems[content] = dumps(message).encode()
        return encoded

    def _history(self, history: list[dict[str, Any]]) -> bytes:
        """The history's JSON: the run kept for it while the history starts with it unchanged, then each further
        message from the cache; the run grows by the further messages up to the first that holds more than text."""
        key = id(history[0])
        run = self._runs.get(key)
        if run is None or not (
            len(run.messages) <= len(history)
            and all(map(is_, run.messages, history))
            and run.copies == history[: len(run.messages)]
        ):
            run = None
        done = len(run.messages) if run is not None else 0
        rest = [self._message(message) for message in history[done:]]
        plain = next((i for i in range(done, len(history)) if not _plain(history[i])), len(history))
        if plain > done:
            added = rest[: plain - done]
            encoded = b",".join([run.encoded, *added]) if run is not None else b",".join(added)
            copies = [*(run.copies if run is not None else ()), *(m.copy() for m in history[done:plain])]
            run = self._runs[key] = _Run(history[:plain], copies, encoded)
        if run is None:
            return b",".join(rest)
        return b",".join([run.encoded, *rest[len(run.messages) - done :]])

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
        if _plain(message):
            self._keep(key, (message, message.copy(), encoded))
        return encoded

    def _keep(self, key: int, entry: Entry) -> None:
        self._recent[key] = entry
        self._recent_bytes += len(entry[2]) + ENTRY_OVERHEAD
        if self._recent_bytes > self._generation_bytes:
            self._older, self._recent, self._recent_bytes = self._recent, {}, 0


def _plain(message: dict[str, Any]) -> bool:
    """Whether a message holds only strings (nested lists or dicts could change unseen)."""
    return all(type(value) is str for value in message.values())
