"""Passages kept between searches: read once, bounded by characters, and never stale after the index changes."""

from __future__ import annotations

from pathlib import Path

from bot.memory.index.passages import PASSAGE_OVERHEAD, ExchangePart, KeptPassages, Passage
from bot.memory.index.store import MemoryIndex, StoredPassage
from bot.sessions.logs import Cursor

DAY = 1_780_000_000.0
KEY = "telegram:1"


def said(index: MemoryIndex, start: int, count: int, offset: int = 0) -> int:
    """Add `count` exchanges (numbered from `start`) to the live log from byte `offset`; the new offset."""
    parts = [
        ExchangePart(True, 2 * n, DAY + 60 * n, "Ann", f"Note {n}", [f"Reply {n}"]) for n in range(start, start + count)
    ]
    end = offset + count
    assert index.add_exchanges(KEY, parts, Cursor("live", offset), Cursor("live", end, 2 * (start + count)), True)
    return end


def replies(window: list[StoredPassage]) -> list[str]:
    return [found.passage.answered for found in window]


def test_a_log_grown_after_a_search_shows_its_new_exchange_among_the_neighbours(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    offset = said(index, 0, 3)
    last = max(index.passages(range(1, 10)).values(), key=lambda found: found.passage.first)
    assert replies(index.around([last], 3, 3)[0]) == ["Reply 0", "Reply 1", "Reply 2"]
    said(index, 3, 1, offset)
    assert replies(index.around([last], 3, 3)[0]) == ["Reply 0", "Reply 1", "Reply 2", "Reply 3"]


def test_a_reply_that_grew_is_read_again(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    offset = said(index, 0, 2)
    [first, open_one] = index.passages([1, 2]).values()
    assert replies(index.around([first], 3, 3)[0]) == ["Reply 0", "Reply 1"]
    more = [ExchangePart(False, 4, DAY + 200, "Ann", "", ["and more"])]
    assert index.add_exchanges(KEY, more, Cursor("live", offset), Cursor("live", offset + 1, 5), True)
    assert index.passages([2])[2].passage.answered == "Reply 1\nand more"
    assert replies(index.around([first], 3, 3)[0]) == ["Reply 0", "Reply 1\nand more"]
    assert open_one.passage.answered == "Reply 1"  # what an earlier search holds stays as it was


def test_what_another_connection_wrote_is_seen_after_refresh(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    said(index, 0, 2)
    index.refresh()
    [first, _] = index.passages([1, 2]).values()
    assert len(index.around([first], 3, 3)[0]) == 2
    other = MemoryIndex.open(tmp_path / "index.sqlite3")
    other.drop_log(KEY, "live")
    said(other, 5, 1)  # the dropped passages' ids come back for others
    index.refresh()
    assert [found.passage.asked for found in index.passages([1, 2]).values()] == ["Note 5"]
    assert replies(index.around([index.passages([1])[1]], 3, 3)[0]) == ["Reply 5"]


def passage(rowid: int, chars: int) -> StoredPassage:
    return StoredPassage(rowid, KEY, "live", Passage("exchange", DAY, "Ann", "x" * chars, "", rowid))


def test_passages_are_read_once_in_id_order_and_kept_within_their_characters() -> None:
    kept = KeptPassages(max_chars=3 * (100 + PASSAGE_OVERHEAD))
    reads: list[list[int]] = []

    def read(ids: list[int]) -> list[StoredPassage]:
        reads.append(ids)
        return [passage(rowid, 100) for rowid in reversed(ids)]

    assert list(kept.passages([3, 1, 2], read)) == [1, 2, 3]
    assert list(kept.passages([2, 4], read)) == [2, 4]
    assert reads == [[3, 1, 2], [4]]
    kept.passages([1], read)  # 2, 4 and 3 were used since: 1 was the oldest, pushed out by 4
    assert reads[-1] == [1]


def test_neighbours_read_after_a_search_take_its_kept_passages_and_a_grown_reply_anew(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    offset = said(index, 0, 3)
    [first, *_] = index.passages([1, 2, 3]).values()  # a search kept all three, and no neighbours yet
    more = [ExchangePart(False, 6, DAY + 400, "Ann", "", ["and more"])]
    assert index.add_exchanges(KEY, more, Cursor("live", offset), Cursor("live", offset + 1, 7), True)
    assert replies(index.around([first], 3, 3)[0]) == ["Reply 0", "Reply 1", "Reply 2\nand more"]
