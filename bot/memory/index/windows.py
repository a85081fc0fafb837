"""Widening found exchanges into windows: each hit with the exchanges around it in its log (the answer is often in
the reply or the exchange after), grown nearest first within a character budget, and merged where windows meet; the
best summary goes beside them, not in place of one."""

from __future__ import annotations

from collections.abc import Sequence

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
    placed: set[int] = set()  # the passages the windows hold
    opened = summaries = 0  # windows of exchanges, and of summaries
    room = total
    full = False  # no further window: a summary further down may still join
    exchanges = [hit.stored for hit in hits if hit.stored.passage.kind == "exchange"]
    neighbours: dict[int, list[StoredPassage]] = {}  # read `limit` hits at a time (one round trip, across a network)
    for hit in hits:
        found = hit.stored
        if found.id in placed or (full and found.passage.kind == "exchange"):
            continue
        if found.passage.kind != "exchange":
            if summaries < SUMMARIES and room > 0:
                size = min(SUMMARY_CHARS, chars, room, passage_chars(found))
                windows.append(Hit(found, hit.score, (found,), size))
                placed.add(found.id)
                summaries += 1
                room -= size
            continue
        if room <= 0:
            full = True
            continue
        if found.id not in neighbours:
            at = next(n for n, each in enumerate(exchanges) if each.id == found.id)
            read = exchanges[at : at + limit]
            neighbours.update(zip((each.id for each in read), index.around(read, reach, reach), strict=True))
        around = [each for each in neighbours[found.id] if not in_prompt(each, shown)]
        window, size = _grown(around, found, min(chars, room), reach)
        ids = {each.id for each in window}
        meets = None if placed.isdisjoint(ids) else next(n for n, w in enumerate(windows) if _overlap(w.window, ids))
        if meets is None and opened == limit:
            full = True
            continue
        room -= size
        placed.update(ids)
        if meets is None:
            windows.append(Hit(found, hit.score, window, size))
            opened += 1
            continue
        other = windows[meets]
        held = {each.id for each in other.window}
        merged = sorted((*other.window, *(f for f in window if f.id not in held)), key=lambda f: f.passage.first)
        windows[meets] = Hit(other.stored, other.score, tuple(merged), other.chars + size)
    return windows


def _grown(
    around: list[StoredPassage], hit: StoredPassage, chars: int, reach: int
) -> tuple[tuple[StoredPassage, ...], int]:
    """The hit and its nearest neighbours, the one after before the one before, while they fit in `chars`; and the
    characters they take (at most `chars`)."""
    at = next(n for n, found in enumerate(around) if found.id == hit.id)
    sizes = [passage_chars(found) for found in around]
    start, end = at, at + 1
    used = sizes[at]
    for step in range(1, reach + 1):
        for n in (at + step, at - step):
            if (n == end or n == start - 1) and 0 <= n < len(around) and used + sizes[n] <= chars:
                used += sizes[n]
                start, end = min(start, n), max(end, n + 1)
    return tuple(around[start:end]), min(chars, used)


def _overlap(window: tuple[StoredPassage, ...], ids: set[int]) -> bool:
    """Whether a window holds any of these exchanges."""
    return any(found.id in ids for found in window)
