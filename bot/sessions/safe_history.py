"""A session's tool-pair-safe history, walked once per message and extended as messages are appended."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

PRUNE_AT = 64  # kept entries below the session's first message in memory, dropped once there are this many


def walk(messages: list[dict[str, Any]], start: int, final: bool = True) -> tuple[list[int], int]:
    """The indices pair-safety keeps walking from `start` (a user message, or where a walk stopped), and the end.

    A round of tool calls stays when every call has its result, with only its own results. Unless `final`, the
    walk stops before a round that nothing follows yet (more results may come) and returns where it stopped.
    """
    kept: list[int] = []
    count = len(messages)
    i = start
    while i < count:
        message = messages[i]
        role = message.get("role")
        calls = message.get("tool_calls") if role == "assistant" else None
        if calls:
            j = i + 1
            while j < count and messages[j].get("role") == "tool":
                j += 1
            if j == count and not final:
                return kept, i
            wanted = {call["id"] for call in calls}
            if {messages[k].get("tool_call_id") for k in range(i + 1, j)} >= wanted:
                kept.append(i)
                kept.extend(k for k in range(i + 1, j) if messages[k].get("tool_call_id") in wanted)
            i = j
            continue
        if role != "tool":
            kept.append(i)
        i += 1
    return kept, count


def first_user(messages: list[dict[str, Any]], start: int = 0) -> int | None:
    """The index of the first user message at or after `start`, or None."""
    return next((i for i in range(start, len(messages)) if messages[i].get("role") == "user"), None)


def pair_safe(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Drop what would break tool pairing: a leading non-user tail, orphan results, unanswered calls."""
    start = first_user(messages)
    if start is None:
        return []
    return [messages[i] for i in walk(messages, start)[0]]


class SafeHistory:
    """`pair_safe` of a session's messages from any start at or after its anchor, without walking them again.

    Indices are absolute (a session's `base` + position), so messages trimmed from the front or read back
    before it leave what was walked valid; a start before the anchor, or messages not as walked, walk afresh.
    """

    __slots__ = ("_anchor", "_done", "_last", "_indices", "_kept")  # one per cached session

    def __init__(self) -> None:
        self._anchor = 0  # the user message the walk began at
        self._done = 0  # the walk is settled before this index
        self._last: dict[str, Any] | None = None  # the message at done - 1, to notice a session not as walked
        self._indices: list[int] = []
        self._kept: list[dict[str, Any]] = []

    @property
    def held(self) -> int:
        """How many walked messages are held."""
        return len(self._kept)

    def window(self, messages: list[dict[str, Any]], base: int, start: int) -> list[dict[str, Any]]:
        """`pair_safe` of the messages from absolute index `start` on, where `messages[0]` is at index `base`."""
        total = base + len(messages)
        if not self._valid(messages, base, start, total):
            anchor = first_user(messages, start - base)
            if anchor is None:
                return []
            self._anchor = self._done = anchor + base
            self._last = None
            self._indices, self._kept = [], []
        if self._done < total:
            self._settle(messages, base)
        self._prune(base)
        position = bisect_left(self._indices, start)
        while position < len(self._indices) and self._kept[position].get("role") != "user":
            position += 1
        if self._done == total:
            return self._kept[position:]
        if position == len(self._indices):  # no settled user message in the window: walk it whole
            return pair_safe(messages[start - base :])
        tail, _ = walk(messages, self._done - base)
        return self._kept[position:] + [messages[i] for i in tail]

    def _valid(self, messages: list[dict[str, Any]], base: int, start: int, total: int) -> bool:
        if self._last is None or start < self._anchor or not base < self._done <= total:
            return False
        return messages[self._done - 1 - base] is self._last

    def _settle(self, messages: list[dict[str, Any]], base: int) -> None:
        """Walk the messages appended since, up to a round of calls whose results may still come."""
        kept, stopped = walk(messages, self._done - base, final=False)
        self._indices.extend(i + base for i in kept)
        self._kept.extend(messages[i] for i in kept)
        if stopped + base > self._done:
            self._done = stopped + base
            self._last = messages[stopped - 1]

    def _prune(self, base: int) -> None:
        """Forget what lies before the session's messages in memory, in batches."""
        gone = bisect_left(self._indices, base)
        if gone >= PRUNE_AT:
            del self._indices[:gone], self._kept[:gone]
