"""Reading questions for search: content words kept, question words dropped, the period a question names."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.memory.index.query import parse_query
from bot.memory.index.wording import kin, root

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def test_question_words_and_stop_words_are_dropped() -> None:
    query = parse_query("What was the name of the trail I told you about?", NOW)
    assert query.words == ("name", "trail")
    assert query.expression.startswith('"name" OR "trail" OR "hike" OR "hiking" OR "walk" OR "route" OR "rout"* OR ')
    assert query.narrow_expression == '"name" OR "trail"'  # the words alone: no synonyms, no root prefixes


def test_forms_and_synonyms_of_a_word_share_a_concept() -> None:
    query = parse_query("Which film did I see with Tom? Was he allergic?", NOW)
    assert query.words == ("film", "see", "tom", "allergic")
    assert query.names == frozenset({"tom"})
    film, see, _, allergic = query.concepts
    assert {root("movie"), root("cinema")} <= set(film)
    assert root("saw") in see
    assert root("allergy") in allergic
    assert root("allergies") == root("allergic") == "aller"


def test_a_word_naming_a_kind_brings_the_things_of_that_kind_beside_its_concept() -> None:
    query = parse_query("What kinds of art does Ann make? Is she religious?", NOW)
    assert query.words == ("kinds", "art", "ann", "make", "religious")
    things = dict(query.kinds)
    assert {"painting", "sculpture", "watercolor"} <= set(things["art"]) and "church" in things["religious"]
    assert root("painting") not in query.concepts[1]  # a thing is not the word: it counts for less
    assert query.things[root("painting")] == [1] and query.things[root("church")] == [4]
    assert '"painting"' in query.expression and '"church"' in query.expression
    assert parse_query("Where did I leave the spare keys?", NOW).things == {}  # most words name no kind


def test_a_word_naming_a_thing_brings_its_kind_and_the_other_names_of_that_kind() -> None:
    query = parse_query("Would Ann enjoy The Four Seasons by Vivaldi? Or Picasso?", NOW)
    assert {"composer", "composers", "bach", "mozart"} <= set(kin("vivaldi")) and "vivaldi" not in kin("vivaldi")
    assert {"painter", "matisse", "sculptor"} <= set(kin("picasso"))  # each kind its first sense is an instance of
    assert query.kinds == () and query.things == {}  # the search adds them where the scope has not said the name
    assert [word for word in query.words if kin(word)] == ["vivaldi", "picasso"]  # enjoy, seasons: no names


def test_a_name_that_is_also_a_common_word_or_too_wide_a_kind_has_no_kin() -> None:
    assert kin("bush") == kin("will") == kin("turner") == ()  # common nouns as well as names
    assert kin("sessions") == kin("drew") == kin("ate") == ()  # forms of common words (session, draw, eat)
    assert kin("dickens") == kin("london") == ()  # writers and cities: too many to stand for each other
    assert kin("tom") == kin("ann") == ()  # a common noun too (a male turkey); not in WordNet


def test_an_all_stop_word_question_has_no_words() -> None:
    assert parse_query("what did you say about that?", NOW).words == ()
    assert parse_query("", NOW).expression == ""


def test_fts_syntax_in_a_question_is_only_words() -> None:
    assert parse_query('NEAR("x") AND trail* -OR "quotes"', NOW).words == ("near", "trail", "quotes")


def test_a_season_or_month_sets_the_period_and_leaves_the_words() -> None:
    spring = parse_query("the trail I mentioned in spring", NOW)
    assert spring.words == ("trail",)
    assert (spring.since, spring.until) == (
        datetime(2026, 3, 1, tzinfo=UTC).timestamp(),
        datetime(2026, 6, 1, tzinfo=UTC).timestamp(),
    )
    october = parse_query("which restaurant in October?", NOW)
    assert october.since == datetime(2025, 10, 1, tzinfo=UTC).timestamp()
    assert parse_query("may I ask about the cake", NOW).since is None


def test_weeks_ago_sets_a_window_around_that_day() -> None:
    query = parse_query("the book I started three weeks ago", NOW)
    assert query.words == ("book", "started")
    assert query.since is not None and query.until is not None
    assert query.since < datetime(2026, 5, 25, tzinfo=UTC).timestamp() < query.until


def test_yesterday_and_this_week_are_periods_not_words() -> None:
    query = parse_query("what did I cook yesterday?", NOW)
    assert query.words == ("cook",)
    assert query.since == datetime(2026, 6, 14, tzinfo=UTC).timestamp()
    assert parse_query("what did we talk about last time?", NOW).words == ()
