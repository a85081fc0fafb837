"""The keyword index stays compact while a chat is indexed a turn at a time: each small write leaves a segment that
every search reads, so a small index is rewritten as one after each write, a big one merges a few pages and is
rewritten once it has grown by a share, and searches find what they found before."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.memory.index import store
from bot.memory.index.passages import ExchangePart
from bot.memory.index.store import MemoryIndex
from bot.sessions.logs import Cursor

DAY = 1_780_000_000.0
KEY = "telegram:1"
TURNS = 300


def segments(index: MemoryIndex) -> int:
    """How many segments FTS5's structure record lists (after its 4-byte cookie: levels, then segments)."""
    block = index._db.execute("SELECT block FROM passage_text_data WHERE id = 10").fetchone()[0]
    values, shift, value = [], 0, 0
    for byte in block[4:]:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            values.append(value)
            if len(values) == 2:
                return values[1]
            shift, value = 0, 0
    raise AssertionError("no structure record")


def turn(index: MemoryIndex, n: int) -> None:
    """One turn as a live chat writes it: the message with its reply, then the reply growing."""
    said = [ExchangePart(True, 2 * n, DAY + 60 * n, "Ann", f"Note {n} about topic{n % 7}", [f"Reply {n}"])]
    assert index.add_exchanges(KEY, said, Cursor("live", 2 * n), Cursor("live", 2 * n + 1, 2 * n + 1), True)
    more = [ExchangePart(False, 2 * n + 1, DAY + 60 * n + 1, "Ann", "", [f"and topic{n % 5}"])]
    assert index.add_exchanges(KEY, more, Cursor("live", 2 * n + 1), Cursor("live", 2 * n + 2, 2 * n + 2), True)


def test_a_small_index_is_one_segment_after_every_write_and_finds_what_it_holds(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    counted = []
    for n in range(TURNS):
        turn(index, n)
        counted.append(segments(index))
    assert set(counted) == {1}
    assert len(index.keyword('"topic3"', 400, None, None)) == len({n for n in range(TURNS) if 3 in (n % 7, n % 5)})


def test_a_big_index_merges_pages_and_is_rewritten_once_grown_by_a_share(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "OPTIMIZE_BELOW", 0)  # every index counts as big
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    counted = []
    for n in range(TURNS):
        turn(index, n)
        counted.append(segments(index))
    rewrites = sum(1 for before, after in zip(counted, counted[1:], strict=False) if after == 1 < before)
    assert max(counted) <= 8 and 10 <= rewrites <= 60  # 600 writes: a rewrite about every 10% of growth
    expression = '"topic3" OR "note"'
    found = index.keyword(expression, 60, None, None)
    index._db.execute("INSERT INTO passage_text (passage_text) VALUES ('optimize')")
    assert segments(index) == 1
    assert index.keyword(expression, 60, None, None) == found
