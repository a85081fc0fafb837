"""What the memory index holds: a chat's messages as exchanges, HISTORY.md's entries and MEMORY.md's facts; and
the stored passages a scope's searches keep between them (`KeptPassages`).

Only what people and the assistant said is kept: tool calls and results, and blocks recalled into a
prompt, never count as things the chat said.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.sessions.logs import LogEntry
from bot.storage.recent import RecentMap

RECALL_HEADING = "From earlier conversations"
MESSAGE_CHARS = 8000  # of one message, indexed; longer ones are cut
_HEADER = re.compile(r"^\[(?P<head>[^\]\n]*)\]\n?")
_LATER_HEADERS = re.compile(r"^\[[^\]\n]* · [^\]\n]*\]\n?", re.MULTILINE)  # a batch's later messages' headers
_FROM = re.compile(r"· from (?P<who>.+?)(?: \([^()]*\))? ·")
_RECALLED = re.compile(rf"^\[{RECALL_HEADING}[^\n]*\n.*?\n\[end of recalled passages\]\n*", re.DOTALL)
_ENTRY = re.compile(r"^\[(\d{4}-\d{2}-\d{2})(?: (\d{2}:\d{2}))?[^\]]*\]\s*", re.MULTILINE)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True, slots=True)
class Passage:
    """One searchable piece of a scope's past: an exchange, a HISTORY.md entry or a MEMORY.md fact."""

    kind: str  # "exchange", "entry" or "fact"
    ts: float
    speaker: str
    asked: str  # the user's message, the entry, or the fact
    answered: str = ""  # the reply to the message, or the heading a fact sits under
    first: int = 0  # the number of the exchange's first message in its log


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage as the index holds it, with where it came from."""

    id: int
    session: str
    log: str
    passage: Passage


@dataclass(slots=True)
class ExchangePart:
    """An exchange read from log entries; `opens` is False for replies continuing the exchange before them."""

    opens: bool
    first: int
    ts: float
    speaker: str
    asked: str
    replies: list[str] = field(default_factory=list)


def message_text(message: dict[str, Any]) -> str:
    """The text of a message's content: a string, or the text parts of a list."""
    content = message.get("content")
    if isinstance(content, list):
        parts = (p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
        return "\n".join(part for part in parts if isinstance(part, str))
    return content if isinstance(content, str) else ""


def spoken(text: str) -> tuple[str, str]:
    """(speaker, text) of a stored user message: its runtime header read for the sender and left out."""
    text = _RECALLED.sub("", text)
    match = _HEADER.match(text)
    if match is None:
        return "user", text.strip()
    head = match.group("head")
    who = _FROM.search(head + " ·")
    speaker = "system" if head.startswith("system message") else (who.group("who") if who else "user")
    return speaker, _LATER_HEADERS.sub("", text[match.end() :]).strip()


def exchange_parts(entries: Iterable[LogEntry]) -> list[ExchangePart]:
    """The entries as exchanges: each user message with the assistant's text replies after it."""
    parts: list[ExchangePart] = []
    for entry in entries:
        role = entry.message.get("role")
        if role == "user":
            speaker, text = spoken(message_text(entry.message))
            parts.append(ExchangePart(True, entry.n, entry.ts, speaker, text[:MESSAGE_CHARS]))
        elif role == "assistant":
            text = message_text(entry.message).strip()
            if not text:
                continue  # only tool calls
            if not parts:
                parts.append(ExchangePart(False, entry.n, entry.ts, "", ""))
            parts[-1].replies.append(text[:MESSAGE_CHARS])
    return parts


def history_entries(text: str, zone: ZoneInfo) -> Iterator[Passage]:
    """Each dated entry of HISTORY.md text (`[YYYY-MM-DD HH:MM] text`)."""
    starts = list(_ENTRY.finditer(text))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        body = text[start.end() : end].strip()
        if body:
            when = datetime.fromisoformat(f"{start.group(1)} {start.group(2) or '00:00'}").replace(tzinfo=zone)
            yield Passage("entry", when.timestamp(), "history", body[:MESSAGE_CHARS])


def memory_facts(text: str, ts: float) -> Iterator[Passage]:
    """Each line of MEMORY.md (a bullet or a sentence) as a fact, with the heading above it."""
    heading = ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
            continue
        fact = _BULLET.sub("", stripped)
        if len(fact) > 2:
            yield Passage("fact", ts, "memory", fact[:MESSAGE_CHARS], heading)


KEPT_CHARS = 256_000  # one scope's kept passages weigh at most (text, and PASSAGE_OVERHEAD each)
KEPT_PASSAGES = 4096  # passages kept at most, and neighbour lists
PASSAGE_OVERHEAD = 200  # characters a kept passage weighs beyond its text (the objects around it)
Neighbours = tuple[tuple[int, ...], tuple[int, ...]]  # ids before a passage (nearest last) and after it, in order


class KeptPassages:
    """Stored passages by id and the ids of each one's neighbours, within KEPT_CHARS: the same ones come up turn
    after turn, and a passage never changes once stored except the open exchange of a live log, whose reply grows.
    Their index tells them what changed (a passage, a log grown) or that anything may have (`forget`)."""

    def __init__(self, max_chars: int = KEPT_CHARS) -> None:
        self._passages: RecentMap[int, StoredPassage] = RecentMap(KEPT_PASSAGES, weight=_weight, max_weight=max_chars)
        self._around: dict[tuple[str, str], dict[tuple[int, int, int], Neighbours]] = {}
        self._open_ended: dict[tuple[str, str], set[tuple[int, int, int]]] = {}  # fewer after than asked: a log's end

    def passages(
        self, ids: Iterable[int], read: Callable[[list[int]], Iterable[StoredPassage]]
    ) -> dict[int, StoredPassage]:
        """The passages with these ids, in id order: kept ones as kept, the others read (and kept)."""
        found: dict[int, StoredPassage] = {}
        missing = []
        for rowid in ids:
            kept = self._passages.get(rowid, fresh=True)
            if kept is None:
                missing.append(rowid)
            else:
                found[rowid] = kept
        if missing:
            for stored in read(missing):
                found[stored.id] = self._passages[stored.id] = stored
        return {rowid: found[rowid] for rowid in sorted(found)}

    def around(
        self,
        found: StoredPassage,
        before: int,
        after: int,
        read: Callable[[], tuple[list[StoredPassage], list[StoredPassage]]],
    ) -> list[StoredPassage]:
        """`found` with up to `before` and `after` neighbours, as kept or as `read` gives them (nearest first)."""
        log = self._around.setdefault((found.session, found.log), {})
        key = (found.passage.first, before, after)
        ids = log.get(key)
        if ids is not None:
            kept = self._passages
            try:
                return [*(kept[rowid] for rowid in ids[0]), found, *(kept[rowid] for rowid in ids[1])]
            except KeyError:  # one of them is no longer kept: read them again
                pass
        nearer, later = read()
        earlier = nearer[::-1]
        for stored in (*earlier, *later):
            self._passages[stored.id] = stored
        if sum(map(len, self._around.values())) >= KEPT_PASSAGES:
            self._around.clear()
            self._open_ended.clear()
            log = self._around.setdefault((found.session, found.log), {})
        log[key] = (tuple(stored.id for stored in earlier), tuple(stored.id for stored in later))
        if len(later) < after:
            self._open_ended.setdefault((found.session, found.log), set()).add(key)
        return [*earlier, found, *later]

    def holds_around(self, found: StoredPassage, before: int, after: int) -> bool:
        """Whether `around` has the passage's neighbours kept (and need not read them)."""
        ids = self._around.get((found.session, found.log), {}).get((found.passage.first, before, after))
        return ids is not None and all(rowid in self._passages for rowid in (*ids[0], *ids[1]))

    def grown(self, session: str, log: str) -> None:
        """Exchanges were added to a log: what was kept of its last passages' neighbours may lack them."""
        kept = self._around.get((session, log), {})
        for key in self._open_ended.pop((session, log), ()):
            kept.pop(key, None)

    def changed(self, rowid: int) -> None:
        """A passage's text changed."""
        self._passages.pop(rowid, None)

    def forget(self) -> None:
        """Anything may have changed (passages dropped, or written by another connection)."""
        self._passages.clear()
        self._around.clear()
        self._open_ended.clear()


def _weight(stored: StoredPassage) -> int:
    return len(stored.passage.asked) + len(stored.passage.answered) + PASSAGE_OVERHEAD
