"""Recall windows: a hit with its neighbouring exchanges, merged where they overlap, within the character budget;
restated questions ranked down; the second pass."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.memory.index.passages import ExchangePart, Passage
from bot.memory.index.protocols import IndexHome, ScopeIndex
from bot.memory.index.query import parse_query
from bot.memory.index.ranking import (
    Hit,
    Shown,
    best_hits,
    joined,
    keyword_ranking,
    keyword_rows,
    rescored,
    shown_ranges,
)
from bot.memory.index.rendering import render_window
from bot.memory.index.restating import asked_roots, echoes, question_roots, restates
from bot.memory.index.windows import SUMMARY_CHARS, widen
from bot.memory.index.word_counts import WordCounts
from bot.sessions.logs import Cursor

DAY = 1_780_000_000.0
NOW = datetime(2026, 6, 1, tzinfo=ZoneInfo("UTC"))


Chat = Callable[[list[tuple[str, str]]], ScopeIndex]


@pytest.fixture
def chat(tmp_path: Path, index_home: IndexHome) -> Chat:
    """Makes an index holding one log of these (asked, answered) exchanges, a minute apart: on SQLite, and on Redis."""

    def make(exchanges: list[tuple[str, str]]) -> ScopeIndex:
        index = index_home.open("memory", tmp_path / "index.sqlite3")
        parts = [
            ExchangePart(True, 2 * n, DAY + 60 * n, "Ann", asked, [answered])
            for n, (asked, answered) in enumerate(exchanges)
        ]
        assert index.add_exchanges("telegram:1", parts, Cursor("live"), Cursor("live", 1, 2 * len(parts)), True)
        return index

    return make


def hits(index: ScopeIndex, text: str, limit: int = 20, follow: bool = False) -> list[Hit]:
    return best_hits(index, parse_query(text, NOW), limit, DAY + 86400, follow=follow)


def filler(count: int, start: int = 0) -> list[tuple[str, str]]:
    return [(f"Small talk number {n} about nothing much", "Nice.") for n in range(start, start + count)]


def test_a_hit_comes_with_its_reply_and_the_exchanges_around_it(chat: Chat) -> None:
    index = chat([*filler(4), ("Which tulips for the fence?", "Deep red ones."), *filler(4, 4)])
    [window] = widen(index, hits(index, "tulips fence"), 5, 2000, 7600)
    said = [found.passage.asked for found in window.window]
    assert said[3] == "Which tulips for the fence?" and len(said) == 7  # three before, three after
    text = render_window(window, ZoneInfo("UTC"))
    assert text.startswith("2026-05-28 (Thu), Ann: Small talk number 1") and "  you replied: Deep red ones." in text


def test_windows_grow_nearest_first_within_their_budget_and_merge_where_they_overlap(chat: Chat) -> None:
    long = "word " * 150
    index = chat([(long, "a"), ("tulips here", "b"), (long, "c"), ("more tulips", "d"), *filler(9)])
    [merged] = widen(index, hits(index, "tulips"), 5, 900, 7600)
    assert [found.passage.answered for found in merged.window] == [
        "b",
        "c",
        "d",
        "Nice.",
    ]  # the long one before: no room
    assert merged.chars <= 2 * 900
    assert len(render_window(merged, ZoneInfo("UTC"))) <= merged.chars


def test_all_windows_together_stay_within_the_total(chat: Chat) -> None:
    far = [exchange for n in range(6) for exchange in [(f"tulips {n} " + "x " * 300, "ok"), *filler(8, 10 * n)]]
    index = chat(far)
    windows = widen(index, hits(index, "tulips"), 5, 2000, 3000)
    assert sum(window.chars for window in windows) <= 3000
    assert sum(len(render_window(window, ZoneInfo("UTC"))) for window in windows) <= 3000 + 40 * len(windows)


def test_an_earlier_asking_of_the_question_ranks_below_what_answers_it(chat: Chat) -> None:
    index = chat([("The spare keys are in the blue vase", "OK"), *filler(3), ("Where are the spare keys?", "No idea.")])
    query = parse_query("Where are the spare keys?", NOW)
    ranked = [index.passages([rowid])[rowid].passage.asked for rowid, _ in keyword_ranking(index, query, 5, DAY)]
    assert ranked == ["The spare keys are in the blue vase", "Where are the spare keys?"]


def test_only_a_near_identical_question_is_a_restatement() -> None:
    question = question_roots(("spare", "house", "keys"))
    assert restates("Where did I put the spare house keys?", question)
    assert not restates("I put the spare house keys in the vase", question)  # a statement: what is looked for
    assert not restates("Are the spare keys in the blue vase by the door?", question)  # it adds words of its own


def test_only_a_short_question_has_roots_to_compare() -> None:
    assert asked_roots("Where did I put the spare house keys?") == question_roots(("put", "spare", "house", "keys"))
    assert asked_roots("I put the spare house keys in the vase") == frozenset()
    assert asked_roots("keys " * 100 + "?") == frozenset()  # a long message is more than a question


def test_an_earlier_question_echoes_when_its_reply_has_none_of_the_question_words() -> None:
    question = question_roots(("blue", "notebook"))
    assert echoes("When did I buy the blue notebook?", "On Tuesday.", question)
    assert not echoes("When did I buy the blue notebook?", "The notebook? On Tuesday.", question)  # the reply speaks
    assert not echoes("I lost my blue notebook. Have you seen it?", "No.", question)  # it tells something first
    assert not echoes("I lost my blue notebook", "Oh no.", question)  # not a question


def test_the_second_pass_finds_what_a_first_hit_names(chat: Chat) -> None:
    index = chat(
        [("My sister Dana moved to Porto", "Nice"), *filler(8), ("Dana loves grilled sardines", "Yum"), *filler(8, 8)],
    )
    assert "Dana loves grilled sardines" not in [hit.stored.passage.asked for hit in hits(index, "sister")]
    assert "Dana loves grilled sardines" in [hit.stored.passage.asked for hit in hits(index, "sister", follow=True)]


def test_a_name_reaches_other_names_of_its_kind_in_the_tool_search_only(chat: Chat) -> None:
    index = chat(
        [*filler(4), ("We had Bach on all evening", "Lovely"), *filler(4, 4), ("A composer friend visits", "Oh")]
    )
    assert hits(index, "Would Ann enjoy Vivaldi?") == []  # auto-recall's search: no word of the question is there
    found = [hit.stored.passage.asked for hit in hits(index, "Would Ann enjoy Vivaldi?", follow=True)]
    assert found[:2] == ["A composer friend visits", "We had Bach on all evening"]  # the kind's word, another name


def test_a_name_the_chat_has_said_is_found_as_itself_not_through_its_kin(chat: Chat) -> None:
    index = chat([("Dana moved to Porto", "Nice"), *filler(4), ("A book on Brigit and the old gods", "Hm"), *filler(4)])
    found = [hit.stored.passage.asked for hit in hits(index, "What did Dana say?", follow=True)]
    assert found[0] == "Dana moved to Porto"  # Dana is a Celtic goddess too, as Brigit is: a member's name stays itself
    assert "A book on Brigit and the old gods" not in found


def test_the_second_pass_scores_as_one_search_of_both_word_sets_would(chat: Chat) -> None:
    index = chat(
        [
            ("My sister Dana moved to Porto", "Nice"),
            ("Dana loves grilled sardines", "Yum"),
            ("My sister likes sardines too", "Ha"),
            *filler(6),
        ],
    )
    query = parse_query("sister", NOW)
    wider = parse_query("sister dana sardines", NOW)
    counts = WordCounts()
    first = keyword_rows(index, query, 5, None, None, (), counts)
    leads = keyword_rows(index, wider, 5, None, None, (), counts, ("dana", "sardines"))
    reused = rescored(wider, joined(first, leads), DAY, counts)
    whole = keyword_ranking(index, wider, 5, DAY)
    assert [rowid for rowid, _ in reused] == [rowid for rowid, _ in whole]
    assert [round(score, 6) for _, score in reused] == [round(score, 6) for _, score in whole]


def test_a_window_stops_where_the_prompt_already_shows_the_chat(chat: Chat) -> None:
    index = chat([*filler(4), ("Which tulips for the fence?", "Deep red ones."), *filler(4, 4)])
    shown = shown_ranges(index, Shown("telegram:1", 10))  # exchanges from the sixth on are in the prompt
    [window] = widen(index, hits(index, "tulips fence"), 5, 2000, 7600, shown)
    assert [found.passage.first for found in window.window] == [2, 4, 6, 8]


def test_the_best_summary_goes_beside_five_windows_not_in_place_of_one(chat: Chat) -> None:
    index = chat([exchange for n in range(6) for exchange in [(f"tulips {n}", "ok"), *filler(8, 10 * n)]])
    summary = "Ann planted tulips by the fence. " * 60
    index.add_entries([Passage("entry", DAY, "history", summary)], "history", "", "1")
    windows = widen(index, hits(index, "tulips"), 5, 2000, 7600)
    kinds = [window.stored.passage.kind for window in windows]
    assert kinds.count("exchange") == 5 and kinds.count("entry") == 1
    [entry] = [window for window in windows if window.stored.passage.kind == "entry"]
    assert entry.chars == SUMMARY_CHARS
    assert len(render_window(entry, ZoneInfo("UTC"))) <= SUMMARY_CHARS + 40
