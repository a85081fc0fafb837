"""The memory index's write side on both backends (SQLite files and Redis), and the Redis index ranking exactly as
the SQLite one on the same passages: the same hits, in the same order, with the same BM25 scores, and the same
windows after the second pass."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.cluster.redis import RedisState
from bot.memory.index.passages import ExchangePart, Passage
from bot.memory.index.protocols import IndexHome, ScopeIndex
from bot.memory.index.query import concept_expression, parse_query
from bot.memory.index.ranking import Hit, best_hits
from bot.memory.index.redis.store import RedisIndex
from bot.memory.index.store import MemoryIndex
from bot.memory.index.windows import widen
from bot.sessions.logs import Cursor

DAY = 1_780_000_000.0
NOW = datetime(2026, 6, 1, tzinfo=ZoneInfo("UTC"))
WORDS = (  # a few that stem, fold accents or split oddly, and common ones
    "garden",
    "basil",
    "tomatoes",
    "hiking",
    "hiked",
    "trail",
    "Lisbon",
    "sister",
    "Maria",
    "kayak",
    "running",
    "runs",
    "allergic",
    "allergy",
    "peanuts",
    "cat",
    "dog",
    "pup",
    "kitty",
    "café",
    "movie",
    "film",
    "cinema",
    "concert",
    "gig",
    "trip",
    "vacation",
    "holiday",
    "relational",
    "nationalities",
    "3d",
    "x²",
    "naïve",
    "Straße",
    "strangers",
    "the",
    "a",
    "and",
    "of",
    "to",
    "I",
    "we",
    "you",
    "it",
    "is",
    "was",
    "my",
    "your",
)
QUESTIONS = (
    "garden basil",
    "allergies to peanuts?",
    "which trails did we hike",
    "what movies did we see",
    "running kayak Lisbon",
    "the gig",
    "cafe",
    "naive relations",
    "3d nationality",
    "tomato cats dogs pups kitties",
    "die Straße",
)


def exchange(n: int, asked: str, answered: str = "", opens: bool = True) -> ExchangePart:
    return ExchangePart(opens, n, DAY + 60 * n, "Ann", asked, [answered] if answered else [])


def said(index: ScopeIndex, text: str, limit: int = 10) -> list[str]:
    rows = index.keyword(parse_query(text, NOW).expression, limit, None, None)
    return [row[3] for row in rows]


@pytest.fixture
def index(tmp_path: Path, index_home: IndexHome) -> ScopeIndex:
    """A scope's fresh index, on SQLite and on Redis."""
    return index_home.open("memory", tmp_path / "index.sqlite3")


def test_a_reply_read_later_joins_its_exchange(index: ScopeIndex) -> None:
    assert index.add_exchanges("tg:1", [exchange(0, "Where is the kayak?")], Cursor("l"), Cursor("l", 1, 1), True)
    later = [exchange(1, "", "In the garage loft", opens=False), exchange(2, "And the paddles?", "Beside it")]
    assert index.add_exchanges("tg:1", later, Cursor("l", 1, 1), Cursor("l", 3, 3), True)

    assert said(index, "garage loft") == ["Where is the kayak?"]
    assert [row[4] for row in index.keyword('"garag"*', 5, None, None)] == ["In the garage loft"]
    assert index.size() == 2
    index.refresh()
    assert index.cursors("tg:1") == {"l": (Cursor("l", 3, 3), True)}


def test_what_searches_read_is_read_again_once_this_or_another_process_wrote(
    tmp_path: Path, index_home: IndexHome
) -> None:
    mine, theirs = (index_home.open("memory", tmp_path / "index.sqlite3") for _ in range(2))
    mine.add_exchanges("tg:1", [exchange(0, "Where is the kayak?")], Cursor("l"), Cursor("l", 1, 1), True)
    mine.refresh()
    assert [row[4] for row in mine.keyword('"kayak"', 5, None, None)] == [""]  # its reply is not read yet
    [found] = mine.passages([1]).values()
    assert (mine.around([found], 2, 2), mine.matching([])) == ([[found]], ([], 1))

    later = [exchange(1, "", "In the garage loft", opens=False), exchange(2, "And the paddles?", "Beside it")]
    theirs.refresh()
    assert theirs.add_exchanges("tg:1", later, Cursor("l", 1, 1), Cursor("l", 3, 3), True)
    mine.refresh()
    [grown] = mine.passages([1]).values()
    [before], top = mine.around([grown], 2, 2), mine.matching([])
    mine.add_exchanges("tg:1", [exchange(3, "Oars too?", "Yes")], Cursor("l", 3, 3), Cursor("l", 4, 4), True)
    [after] = mine.around([grown], 2, 2)

    assert grown.passage.answered == "In the garage loft"
    assert [each.passage.asked for each in before] == ["Where is the kayak?", "And the paddles?"]
    assert [each.passage.asked for each in after] == ["Where is the kayak?", "And the paddles?", "Oars too?"]
    assert (top, mine.matching([])) == (([], 2), ([], 3))  # the highest passage id


def test_a_write_from_a_stale_cursor_stores_nothing(index: ScopeIndex) -> None:
    assert index.add_exchanges("tg:1", [exchange(0, "Tulips by the fence")], Cursor("l"), Cursor("l", 1, 1), True)
    assert not index.add_exchanges("tg:1", [exchange(0, "Tulips by the fence")], Cursor("l"), Cursor("l", 1, 1), True)
    assert said(index, "tulips") == ["Tulips by the fence"]


def test_two_processes_catching_up_one_log_at_once_store_it_once(tmp_path: Path, index_home: IndexHome) -> None:
    views = [index_home.open("memory", tmp_path / "index.sqlite3") for _ in range(2)]
    parts = [exchange(n, f"Message {n} about the garden") for n in range(300)]

    def catch_up(index: ScopeIndex) -> bool:
        return index.add_exchanges("tg:1", parts, Cursor("l"), Cursor("l", 300, 300), True)

    with ThreadPoolExecutor(2) as pool:
        stored = list(pool.map(catch_up, views))
    assert sorted(stored) == [False, True]
    assert [view.size() for view in views] == [300, 300]
    assert views[1].matching(['"garden"']) == ([300], 300)


def test_a_new_live_log_archives_the_old_one_and_a_dropped_log_takes_its_passages(index: ScopeIndex) -> None:
    index.add_exchanges("tg:1", [exchange(0, "Violin lessons on Tuesday")], Cursor("old"), Cursor("old", 1, 1), True)
    index.add_exchanges("tg:1", [exchange(0, "Piano lessons on Friday")], Cursor("new"), Cursor("new", 1, 1), True)
    index.add_exchanges("tg:1:7", [exchange(0, "Cello in the thread")], Cursor("t"), Cursor("t", 1, 1), True)
    index.refresh()
    assert sorted(index.live_logs("tg:1")) == [("tg:1", "new", 1), ("tg:1:7", "t", 1)]
    assert index.cursors("tg:1")["old"] == (Cursor("old", 1, 1), False)

    index.drop_log("tg:1", "old")
    index.refresh()
    assert said(index, "lessons") == ["Piano lessons on Friday"]
    assert "old" not in index.cursors("tg:1")
    assert index.matching(['"lesson"', '"violin"']) == ([1, 0], 3)


def test_entries_are_stored_once_per_mark_and_replaced_by_kind(index: ScopeIndex) -> None:
    fact = Passage("fact", DAY, "memory", "Ben is a chef", "People")
    index.add_entries([fact], "memory", "", "1")
    index.add_entries([fact], "memory", "", "1")  # another process got there first: its mark moved on
    assert said(index, "chef") == ["Ben is a chef"]
    index.add_entries([Passage("fact", DAY, "memory", "Ben is a baker", "People")], "memory", "1", "2", "fact")
    index.refresh()
    assert (said(index, "chef"), said(index, "baker"), index.mark("memory")) == ([], ["Ben is a baker"], "2")
    assert index.matching(['"ben"']) == ([1], 1)  # the id a replaced last passage had is given again


def test_filters_leave_out_a_log_from_a_message_on_and_keep_a_period(index: ScopeIndex) -> None:
    parts = [exchange(n, f"Fridge note {n}") for n in range(6)]
    index.add_exchanges("tg:1", parts, Cursor("l"), Cursor("l", 6, 6), True)
    rows = index.keyword('"fridg"*', 10, DAY + 60, DAY + 300, [("tg:1", "l", 4)])
    assert sorted(row[3] for row in rows) == ["Fridge note 1", "Fridge note 2", "Fridge note 3"]


def test_neighbours_are_the_exchanges_of_the_same_log_in_order(index: ScopeIndex) -> None:
    parts = [exchange(2 * n, f"Line {n}") for n in range(7)]
    index.add_exchanges("tg:1", parts, Cursor("l"), Cursor("l", 7, 14), True)
    index.add_exchanges("tg:2", [exchange(0, "Line elsewhere")], Cursor("l"), Cursor("l", 1, 1), True)
    [middle] = index.passages([4]).values()
    [[*near], [*first]] = index.around([middle, index.passages([1])[1]], 2, 3)
    assert [found.passage.asked for found in near] == [f"Line {n}" for n in range(1, 7)]
    assert [found.passage.asked for found in first] == [f"Line {n}" for n in range(4)]


def test_a_cleared_index_forgets_passages_and_marks(index: ScopeIndex) -> None:
    index.add_exchanges("tg:1", [exchange(0, "Sailing on Sunday")], Cursor("l"), Cursor("l", 1, 1), True)
    index.add_entries([Passage("entry", DAY, "history", "Went sailing")], "history", "", "9")
    index.clear()
    index.refresh()
    assert (said(index, "sailing"), index.cursors("tg:1"), index.mark("history"), index.size()) == ([], {}, "", 0)


def test_a_scope_never_sees_another_scopes_passages(tmp_path: Path, index_home: IndexHome) -> None:
    mine = index_home.open("memory", tmp_path / "a" / "index.sqlite3")
    theirs = index_home.open("memory/chats/tg_2", tmp_path / "b" / "index.sqlite3")
    mine.add_exchanges("tg:1", [exchange(0, "My secret recipe")], Cursor("l"), Cursor("l", 1, 1), True)
    theirs.add_exchanges("tg:2", [exchange(0, "Their recipe book")], Cursor("l"), Cursor("l", 1, 1), True)
    assert (said(mine, "recipe"), said(theirs, "recipe")) == (["My secret recipe"], ["Their recipe book"])
    index_home.delete("memory/chats/tg_2", tmp_path / "b" / "index.sqlite3")
    assert said(mine, "recipe") == ["My secret recipe"]


def test_redis_ranks_exactly_as_sqlite_on_the_same_passages(tmp_path: Path, redis_url: str) -> None:
    sqlite = MemoryIndex.open(tmp_path / "index.sqlite3")
    redis = RedisIndex.open(RedisState(redis_url, prefix="t"), "memory", tmp_path / "index.sqlite3")
    for index in (sqlite, redis):
        fill(index, random.Random(7))
    assert list(redis.passages([9, 3, 5])) == list(sqlite.passages([9, 3, 5])) == [3, 5, 9]  # read in that order
    for question in QUESTIONS:
        expression = parse_query(question, NOW).expression
        for window in ((None, None), (DAY + 3000, DAY + 9000)):
            expected = sqlite.keyword(expression, 40, *window, [("tg:1", "l", 150)])
            found = redis.keyword(expression, 40, *window, [("tg:1", "l", 150)])
            assert [row[0] for row in found] == [row[0] for row in expected], question
            assert [row[1:] for row in found] == [row[1:] for row in expected]  # scores to the last bit
        assert redis.matching([expression, '"basil"']) == sqlite.matching([expression, '"basil"'])
        words = [concept_expression(word) for word in parse_query(question, NOW).words]  # as WordCounts counts
        assert redis.matching(words) == sqlite.matching(words)
        alone = parse_query(question, NOW).narrow_expression  # the recall tool's search of the words alone
        assert redis.keyword(alone, 40, None, None) == sqlite.keyword(alone, 40, None, None)
    for expression in ('"stra"*', '"naiv"*', '"caf"*'):  # a prefix whose terms go on past ASCII, or fold to it
        assert redis.keyword(expression, 40, None, None) == sqlite.keyword(expression, 40, None, None)
        assert redis.matching([expression]) == sqlite.matching([expression])
        query = parse_query(question, NOW)
        hits = [widen(index, best_hits(index, query, 20, DAY, follow=True), 5, 2000, 7600) for index in (sqlite, redis)]
        assert [windows(found) for found in hits[1]] == [windows(found) for found in hits[0]], question


def windows(hit: Hit) -> tuple[int, float, list[int]]:
    return hit.stored.id, hit.score, [found.id for found in hit.window]


def fill(index: ScopeIndex, rnd: random.Random) -> None:
    """Two hundred exchanges of random words in batches (some replies read a batch later), then facts replaced."""
    for batch in range(20):
        parts = []
        for n in range(10):
            opens = not (n == 0 and batch % 3 == 1)
            asked = " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(2, 14))) if opens else ""
            parts.append(
                exchange(batch * 10 + n, asked, " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 9))), opens)
            )
        start, end = Cursor("l", batch * 10, batch * 10), Cursor("l", batch * 10 + 10, batch * 10 + 10)
        assert index.add_exchanges("tg:1", parts, start, end, live=True)
    index.add_entries([Passage("fact", DAY, "memory", "Maria has a cat named Basil", "People")], "memory", "", "1")
    later = Passage("fact", DAY, "memory", "Ann loves hiking the café trail", "People")
    index.add_entries([later], "memory", "1", "2", replace="fact")
