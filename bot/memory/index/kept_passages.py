"""Passages a scope's searches read, kept between them: the same passages and their neighbours come up turn after
turn, and a passage never changes once stored except the open exchange of a live log, whose reply grows."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from bot.memory.index.passages import StoredPassage
from bot.storage.recent import RecentMap

KEPT_CHARS = 256_000  # of passage text one scope keeps: a few hundred exchanges, about 0.5 MB with the objects
KEPT_PASSAGES = 4096  # passages kept at most, and neighbour lists
PASSAGE_OVERHEAD = 200  # characters a kept passage weighs beyond its text (the objects around it)
Neighbours = tuple[tuple[int, ...], tuple[int, ...]]  # ids before a passage (nearest last) and after it, in order


class KeptPassages:
    """Stored passages by id and the ids of each one's neighbours, within KEPT_CHARS; their index tells it what
    changed (a passage, a log grown) or that anything may have (`forget`)."""

    def __init__(self, max_chars: int = KEPT_CHARS) -> None:
        self._passages: RecentMap[int, StoredPassage] = RecentMap(KEPT_PASSAGES, weight=_weight, max_weight=max_chars)
        self._around: dict[tuple[str, str], dict[tuple[int, int, int], Neighbours]] = {}

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
            kept = [self._passages.get(rowid) for rowid in (*ids[0], *ids[1])]
            if all(stored is not None for stored in kept):
                earlier = [stored for stored in kept[: len(ids[0])] if stored is not None]
                later = [stored for stored in kept[len(ids[0]) :] if stored is not None]
                return [*earlier, found, *later]
        nearer, later = read()
        earlier = nearer[::-1]
        for stored in (*earlier, *later):
            self._passages[stored.id] = stored
        if sum(map(len, self._around.values())) >= KEPT_PASSAGES:
            self._around.clear()
            log = self._around.setdefault((found.session, found.log), {})
        log[key] = (tuple(stored.id for stored in earlier), tuple(stored.id for stored in later))
        return [*earlier, found, *later]

    def grown(self, session: str, log: str) -> None:
        """Exchanges were added to a log: what was kept of its last passages' neighbours may lack them."""
        kept = self._around.get((session, log))
        if kept:
            self._around[session, log] = {key: ids for key, ids in kept.items() if len(ids[1]) >= key[2]}

    def changed(self, rowid: int) -> None:
        """A passage's text changed."""
        self._passages.pop(rowid, None)

    def forget(self) -> None:
        """Anything may have changed (passages dropped, or written by another connection)."""
        self._passages.clear()
        self._around.clear()


def _weight(stored: StoredPassage) -> int:
    return len(stored.passage.asked) + len(stored.passage.answered) + PASSAGE_OVERHEAD
