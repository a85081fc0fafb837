"""Auto-recall, on every turn, rescores fewer keyword hits than the recall tool, and still finds the passage a
question asks for in other words among many that share a word with it; a long message is searched by its rarest
words."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from bot.memory.index.query import parse_query
from bot.memory.index.ranking import CANDIDATES, TURN_CANDIDATES, rarest_words
from bot.memory.index.store import FileIndexes, MemoryIndex
from bot.memory.index.word_counts import WordCounts
from bot.memory.members import FileMembers
from bot.sessions.logs import FileLogs
from bot.sessions.store import SessionStore
from tests.memory.test_scope_index import Backend, asked, indexes

PLACES = ["Oslo", "Porto", "Lyon", "Bruges", "Cork", "Gdansk", "Bergen", "Split", "Ghent", "Turku"]
THINGS = ["museum", "ferry", "market", "bakery", "castle", "harbour", "tram", "cathedral", "gallery", "park"]


class Limits(MemoryIndex):
    """The SQLite index, noting how many hits each keyword search asked for."""

    asked_for: list[int] = []

    def keyword(
        self,
        expression: str,
        limit: int,
        since: float | None,
        until: float | None,
        leave_out: Sequence[tuple[str, str, int]] = (),
    ) -> list[tuple[int, float, float, str, str]]:
        self.asked_for.append(limit)
        return super().keyword(expression, limit, since, until, leave_out)


class NotedIndexes(FileIndexes):
    def open(self, scope: str, path: Path) -> MemoryIndex:
        return Limits.open(path)


async def test_auto_recall_rescores_fewer_hits_and_finds_a_passage_in_other_words(tmp_path: Path) -> None:
    backend = Backend(SessionStore(tmp_path / "sessions"), FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "l"))
    index = indexes(tmp_path, backend, home=NotedIndexes())
    scope = tmp_path / "ws" / "memory"
    backend.say("telegram:1", "We rented a flat by the beach for the vacation", "Lovely")
    for n in range(45):  # each shares "holiday" with the question: more keyword hits than auto-recall rescores
        place, thing = PLACES[n % len(PLACES)], THINGS[n // len(PLACES) % len(THINGS)]
        backend.say("telegram:1", f"On the holiday in {place} we saw the {thing} (day {n})", "Nice")
    await index.join(scope, "telegram:1")
    question = "Which apartment did we rent for the holiday?"

    Limits.asked_for.clear()
    turn = await index.search(scope, question, 5, join="telegram:1", window_chars=(1200, 6000))
    on_turn = list(Limits.asked_for)
    Limits.asked_for.clear()
    tool = await index.search(scope, question, 5, join="telegram:1", window_chars=(1200, 8000), follow=True)
    await index.stop()

    assert asked(turn)[0] == asked(tool)[0] == "We rented a flat by the beach for the vacation"
    assert on_turn == [TURN_CANDIDATES] and TURN_CANDIDATES < CANDIDATES
    assert Limits.asked_for[0] == CANDIDATES


class Held:
    """Passages holding each word, as `WordCounts` reads them from an index (a word's first quoted term names it)."""

    def __init__(self, held: dict[str, int]) -> None:
        self.held = held

    def matching(self, expressions: Sequence[str]) -> tuple[list[int], int]:
        return [self.held.get(expression.split('"')[1], 0) for expression in expressions], 1000


def test_a_long_message_keeps_its_rarest_words_that_some_passage_holds_in_its_order() -> None:
    held = {"maya": 1, "quince": 2, "marmalade": 3, "coffee": 25, "market": 40, "bread": 40, "kids": 90}
    said = "On Tuesday at the market Maya and the kids ate bread, coffee, quince marmalade and quiche"
    query = parse_query(said, datetime.now())
    counts = WordCounts()
    counts.count(Held(held), query.words)  # type: ignore[arg-type]

    long = rarest_words(query, counts, 5)
    short = rarest_words(query, counts, len(query.words))

    assert long.words == ("market", "maya", "coffee", "quince", "marmalade")  # "bread" ties with "market", said later
    assert query.names == {"tuesday", "maya"} and long.names == {"maya"}  # "tuesday", "quiche": in no passage
    assert short is query
