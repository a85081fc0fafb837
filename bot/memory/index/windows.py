"""Widening found exchanges into windows: each hit with the exchanges around it in its log (the answer is often in
the reply or the exchange after), grown nearest first within a character budget, and merged where windows meet; the
best summary goes beside them, not in place of one."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from bot.memory.index.protocols import PassageIndex
from bot.memory.index.ranking import Hit, in_prompt
from bot.memory.index.store import StoredPassage

REACH = 3  # exchanges looked at on each side of a hit, unless the caller asks for fewer
SUMMARIES = 1  # history entries and facts beside the windows: they hold no words said, only what was made of them
SUMMARY_CHARS = 800  # of one: what happened and when, in short; the words said are in the windows


def passage_chars(found: StoredPassage) -> int:
    """About how many characters a passage takes when rendered."""
    return len(found.passage.asked) + len(found.passage.answered) + 24


def widen(
    index: PassageIndex,
    hits: Sequence[Hit],
    limit: int,
    chars: int,
    total: int,
    shown: Sequence[tuple[str, str, int]] = (),
    reach: int = REACH,
) -> list[Hit]:
    """The first `limit` windows of the hits, best first: each hit with up to `reach` neighbours on each side within
    `chars` characters, up to what the prompt shows (`shown`, as `ranking.shown_ranges` gives it); windows that
    overlap merge into one. Beside them, where it ranks, the best summary (a history entry or fact) within
    SUMMARY_CHARS: it takes no window's place. All of them together stay within `total` characters."""
    windows: list[Hit] = []
    room = total
    full = False  # no further window: a summary further down may still join
    exchanges = [hit.stored for hit in hits if hit.stored.passage.kind == "exchange"]
    neighbours: dict[int, list[StoredPassage]] = {}  # read `limit` hits at a time (one round trip, across a network)
    for hit in hits:
        if full and hit.stored.passage.kind == "exchange":
            continue
        if any(found.id == hit.stored.id for window in windows for found in window.window):
            continue
        if hit.stored.passage.kind != "exchange":
            summaries = sum(window.stored.passage.kind != "exchange" for window in windows)
            if summaries < SUMMARIES and room > 0:
                size = min(SUMMARY_CHARS, chars, room, passage_chars(hit.stored))
                windows.append(replace(hit, window=(hit.stored,), chars=size))
                room -= size
            continue
        if room <= 0:
            full = True
            continue
        if hit.stored.id not in neighbours:
            at = next(n for n, found in enumerate(exchanges) if found.id == hit.stored.id)
            read = exchanges[at : at + limit]
            neighbours.update(zip((found.id for found in read), index.around(read, reach, reach), strict=True))
        around = [found for found in neighbours[hit.stored.id] if not in_prompt(found, shown)]
        window = _grown(around, hit.stored, min(chars, room), reach)
        size = min(chars, room, sum(passage_chars(found) for found in window))
        meets = next((n for n, other in enumerate(windows) if _overlap(other.window, window)), None)
        if meets is None and sum(window.stored.passage.kind == "exchange" for window in windows) == limit:
            full = True
            continue
        room -= size
        if meets is None:
            windows.append(replace(hit, window=window, chars=size))
            continue
        other = windows[meets]
        held = {found.id for found in other.window}
        merged = sorted((*other.window, *(f for f in window if f.id not in held)), key=lambda f: f.passage.first)
        windows[meets] = replace(other, window=tuple(merged), chars=other.chars + size)
    return windows


def _grown(around: list[StoredPassage], hit: StoredPassage, chars: int, reach: int) -> tuple[StoredPassage, ...]:
    """The hit and its nearest neighbours, the one after before the one before, while they fit in `chars`."""
    at = next(n for n, found in enumerate(around) if found.id == hit.id)
    start, end = at, at + 1
    room = chars - passage_chars(hit)
    for step in range(1, reach + 1):
        for n in (at + step, at - step):
            if (n == end or n == start - 1) and 0 <= n < len(around) and passage_chars(around[n]) <= room:
                room -= passage_chars(around[n])
                start, end = min(start, n), max(end, n + 1)
    return tuple(around[start:end])


def _overlap(window: tuple[StoredPassage, ...], other: tuple[StoredPassage, ...]) -> bool:
    """Whether two windows share an exchange."""
    return not {found.id for found in window}.isdisjoint(found.id for found in other)
