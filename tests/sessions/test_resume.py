"""Archived sessions listed and resumed, live ones summarised, on the local and the Redis store alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.sessions.redis_store import RedisSessionStore
from bot.sessions.session import Sessions
from bot.sessions.store import SessionStore

KEY = "telegram:1"


@pytest.fixture(params=["local", "redis"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Sessions]]:
    """Makes stores over the same data: a second one reads what the first wrote, as after a restart."""
    if request.param == "local":
        yield lambda: SessionStore(tmp_path)
        return
    state = RedisState(request.getfixturevalue("redis_url"), prefix=f"t{id(tmp_path)}")
    yield lambda: RedisSessionStore(state)
    state.client.close()


def talk(store: Sessions, key: str, words: str) -> None:
    session = store.get(key)
    store.append(session, [{"role": "user", "content": f"[telegram DM 1 · 2026-11-28 10:00]\n{words}"}])
    store.append(session, [{"role": "assistant", "content": f"About {words}."}])


def fill(store: Sessions) -> None:
    """Two archived conversations of the chat, one of its thread and one of a neighbour, and a live one."""
    for key, words in [(KEY, "pancakes"), (KEY, "waffles"), (f"{KEY}:9", "thread talk"), ("telegram:12", "other")]:
        talk(store, key, words)
        store.reset(key)
    talk(store, KEY, "live now")


def test_archives_list_the_chats_own_most_recent_first(stores: Callable[[], Sessions]) -> None:
    store = stores()
    fill(store)
    archives = store.archives(KEY)
    assert [(a.first_words, a.messages) for a in archives] == [("waffles", 2), ("pancakes", 2)]
    assert all(a.size > 0 and a.last_active > 0 for a in archives)


def test_resume_makes_an_archive_live_and_archives_the_live_one(stores: Callable[[], Sessions]) -> None:
    store = stores()
    fill(store)
    pancakes = store.archives(KEY)[1]
    old = store.resume(KEY, pancakes.id)
    assert [m["content"] for m in old.messages][-1] == "About live now."
    assert [m["content"] for m in store.get(KEY).messages][-1] == "About pancakes."
    talk(store, KEY, "more pancakes")
    again = stores()
    assert [m["content"] for m in again.get(KEY).messages][-1] == "About more pancakes."
    assert [a.first_words for a in again.archives(KEY)] == ["live now", "waffles"]


def test_resuming_twice_in_a_row_loses_nothing(stores: Callable[[], Sessions]) -> None:
    store = stores()
    fill(store)
    store.resume(KEY, store.archives(KEY)[1].id)  # pancakes back; live now archived
    store.resume(KEY, store.archives(KEY)[0].id)  # live now back; pancakes archived, perhaps within the second
    assert [m["content"] for m in store.get(KEY).messages][-1] == "About live now."
    assert sorted(a.first_words for a in store.archives(KEY)) == ["pancakes", "waffles"]


def test_an_unknown_archive_is_a_key_error(stores: Callable[[], Sessions]) -> None:
    store = stores()
    fill(store)
    with pytest.raises(KeyError):
        store.resume(KEY, "20200101T000000")
    assert [m["content"] for m in store.get(KEY).messages][-1] == "About live now."


def test_summaries_count_the_messages_of_live_sessions_only(stores: Callable[[], Sessions]) -> None:
    store = stores()
    fill(store)
    talk(store, KEY, "more")
    assert [(s["key"], s["messages"]) for s in store.summaries(0)] == [(KEY, 4)]


def test_a_resumed_archive_is_shown_though_consolidated_until_consolidation_moves_past_it(
    stores: Callable[[], Sessions],
) -> None:
    store = stores()
    fill(store)
    pancakes = store.archives(KEY)[1]
    assert store.resume(KEY, pancakes.id).messages  # "live now" set aside
    session = store.get(KEY)
    store.mark_consolidated(session, session.total)  # as consolidation leaves an archived session
    assert [m["content"] for m in session.history(50)][-1] == "About pancakes."
    again = stores().get(KEY)  # as after a restart
    assert [m["content"] for m in again.history(50)][-1] == "About pancakes."
    talk(store, KEY, "more pancakes")
    talk(store, KEY, "syrup")
    session = store.get(KEY)
    store.mark_consolidated(session, session.total - 2)  # consolidation moved past where it was resumed
    assert [m["content"] for m in session.history(50)] == [m["content"] for m in session.messages[-2:]]


def test_a_consolidation_still_running_when_its_archive_is_resumed_marks_the_live_session(
    stores: Callable[[], Sessions],
) -> None:
    store = stores()
    fill(store)
    consolidating = store.reset(KEY)  # /new: its consolidation holds this copy while the model answers
    talk(store, KEY, "fresh")
    resumed = next(a for a in store.archives(KEY) if a.first_words == "live now")
    store.resume(KEY, resumed.id)
    store.mark_consolidated(consolidating, consolidating.total)  # the model answered: the round ends
    assert store.get(KEY).consolidated == 2
    again = stores()
    assert again.get(KEY).consolidated == 2
    assert [m["content"] for m in again.get(KEY).history(50)] == [
        consolidating.messages[0]["content"],
        "About live now.",
    ]
    assert [a.first_words for a in again.archives(KEY)] == ["fresh", "waffles", "pancakes"]  # no stray archive


def test_a_consolidation_outliving_a_resume_and_another_new_marks_the_archive_it_is_in(
    stores: Callable[[], Sessions],
) -> None:
    store = stores()
    fill(store)
    consolidating = store.reset(KEY)
    store.resume(KEY, next(a for a in store.archives(KEY) if a.first_words == "live now").id)
    store.reset(KEY)  # /new again: the resumed session is archived once more
    talk(store, KEY, "fresh")
    store.mark_consolidated(consolidating, consolidating.total)
    again = stores()
    assert again.get(KEY).consolidated == 0  # the fresh session is not marked
    assert [a.first_words for a in again.archives(KEY)][:1] == ["live now"]
    assert sorted(a.first_words for a in again.archives(KEY)) == ["live now", "pancakes", "waffles"]


def test_an_archive_resumed_by_another_worker_while_it_consolidates_is_marked_live(
    redis_url: str, tmp_path: Path
) -> None:
    state = RedisState(redis_url, prefix=f"t{id(tmp_path)}")
    one, two = RedisSessionStore(state), RedisSessionStore(state)
    fill(one)
    consolidating = one.reset(KEY)  # /new on worker one, whose consolidation holds this copy
    two.resume(KEY, next(a for a in two.archives(KEY) if a.first_words == "live now").id)  # /resume on worker two
    before = sorted(state.client.scan_iter(match=state.key("session-archive", "*")))
    one.mark_consolidated(consolidating, consolidating.total)
    assert two.get(KEY).consolidated == 2 and RedisSessionStore(state).get(KEY).consolidated == 2
    assert sorted(state.client.scan_iter(match=state.key("session-archive", "*"))) == before  # no stray keys
    two.reset(KEY)  # archived again: a later mark of the old copy lands on no fresh session
    talk(two, KEY, "fresh")
    stale = RedisSessionStore(state).get(KEY)
    one.mark_consolidated(consolidating, consolidating.total)
    assert RedisSessionStore(state).get(KEY).consolidated == stale.consolidated == 0
    state.client.close()
