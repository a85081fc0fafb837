"""The keyword index stays compact while a chat is indexed a turn at a time: each small write leaves a segment that
every search reads, so the writes merge them as they go, and searches find what they found before."""

from __future__ import annotations

from pathlib import Path

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


def test_a_chat_indexed_a_turn_at_a_time_keeps_few_segments_and_finds_the_same(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    for n in range(TURNS):
        turn(index, n)
    expression = '"topic3" OR "note"'
    found = index.keyword(expression, 60, None, None)
    assert segments(index) <= 8
    index._db.execute("INSERT INTO passage_text (passage_text) VALUES ('optimize')")
    assert segments(index) == 1
    assert index.keyword(expression, 60, None, None) == found
    assert len(index.keyword('"topic3"', 400, None, None)) == len({n for n in range(TURNS) if 3 in (n % 7, n % 5)})
