"""Sessions in Redis: two workers (two stores on one server) see each other's turns, read only what they lack."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from bot.cluster.redis import RedisState
from bot.sessions.redis_store import RedisSessionStore


@pytest.fixture
def shared(redis_url: str) -> Iterator[RedisState]:
    state = RedisState(redis_url, prefix="t")
    yield state
    state.client.close()


def exchange(n: int) -> list[dict[str, Any]]:
    return [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}]


def contents(messages: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in messages]


class Fetched:
    """Counts the records each load round trip brought back (wraps the store's load script)."""

    def __init__(self, store: RedisSessionStore) -> None:
        self.records: list[int] = []
        script = store._load_script

        def counting(**kwargs: Any) -> Any:
            reply = script(**kwargs)
            self.records.append(len(reply[3]))
            return reply

        store._load_script = counting


def test_a_turn_on_another_worker_sees_the_history_and_the_first_cache_catches_up(shared: RedisState) -> None:
    worker_a, worker_b = RedisSessionStore(shared), RedisSessionStore(shared)
    session = worker_a.get("telegram:1")
    worker_a.append(session, exchange(1)[:1], inbound_ids=["m1"])
    worker_a.append(session, exchange(1)[1:])
    worker_a.record_usage(session, 10, 2)

    on_b = worker_b.get("telegram:1")
    assert contents(on_b.history(50)) == ["q1", "a1"]
    assert worker_b.has_inbound(on_b, ["m1"]) and (on_b.prompt_tokens, on_b.completion_tokens) == (10, 2)
    worker_b.append(on_b, exchange(2), inbound_ids=["m2"], usage=(5, 1))  # the usage of the call that wrote them

    again = worker_a.get("telegram:1")
    assert again is session  # the cached copy, brought up to date rather than read again
    assert contents(again.history(50)) == ["q1", "a1", "q2", "a2"]
    assert worker_a.has_inbound(again, ["m2"]) and (again.prompt_tokens, again.completion_tokens) == (15, 3)


def test_a_current_cache_costs_no_records_and_a_stale_one_only_the_new_ones(shared: RedisState) -> None:
    worker_a, worker_b = RedisSessionStore(shared, tail=10), RedisSessionStore(shared, tail=10)
    fetched = Fetched(worker_a)
    session = worker_a.get("s:1")
    for n in range(3):
        worker_a.append(session, exchange(n))
    worker_a.get("s:1")
    worker_b.append(worker_b.get("s:1"), exchange(3))
    worker_a.get("s:1")
    assert fetched.records == [0, 0, 2]
    assert session.total == 8


def test_loading_reads_only_the_tail(shared: RedisState) -> None:
    writer = RedisSessionStore(shared)
    session = writer.get("s:1")
    for n in range(100):
        writer.append(session, exchange(n))
    reader = RedisSessionStore(shared, tail=10)
    fetched = Fetched(reader)
    loaded = reader.get("s:1")
    assert fetched.records == [10]
    assert loaded.total == 200 and loaded.base == 190
    assert contents(loaded.history(4)) == ["q98", "a98", "q99", "a99"]
    assert contents(reader.recent("s:1", 3)) == ["a98", "q99", "a99"]


def test_a_cache_far_behind_reads_the_tail_not_everything_since(shared: RedisState) -> None:
    worker_a, worker_b = RedisSessionStore(shared, tail=10), RedisSessionStore(shared, tail=10)
    fetched = Fetched(worker_a)
    worker_a.get("s:1")
    on_b = worker_b.get("s:1")
    for n in range(30):
        worker_b.append(on_b, exchange(n))
    session = worker_a.get("s:1")
    assert fetched.records == [0, 10]
    assert session.base == 50 and contents(session.messages[-2:]) == ["q29", "a29"]


async def test_consolidation_reads_back_older_unconsolidated_messages_and_its_mark_is_shared(
    shared: RedisState,
) -> None:
    writer = RedisSessionStore(shared)
    session = writer.get("s:1")
    for n in range(10):
        writer.append(session, exchange(n))
    writer.mark_consolidated(session, 4)
    worker = RedisSessionStore(shared, tail=6)
    loaded = worker.get("s:1")
    assert loaded.consolidated == 4 and loaded.base == 14
    await worker.load_unconsolidated(loaded)
    assert loaded.base == 4 and contents(loaded.messages[:2]) == ["q2", "a2"]
    writer.mark_consolidated(session, 12)
    writer.mark_consolidated(session, 8)  # a late, lower mark never lowers it
    worker.sync_consolidated(loaded)
    assert loaded.consolidated == 12 and worker.get("s:1").consolidated == 12


def test_reset_on_one_worker_starts_afresh_on_every_worker(shared: RedisState) -> None:
    worker_a, worker_b = RedisSessionStore(shared), RedisSessionStore(shared)
    worker_a.append(worker_a.get("s:1"), exchange(1))
    cached_on_b = worker_b.get("s:1")
    archived = worker_a.reset("s:1")
    assert contents(archived.messages) == ["q1", "a1"]
    worker_a.append(worker_a.get("s:1"), exchange(2))
    fresh = worker_b.get("s:1")
    assert fresh is not cached_on_b and contents(fresh.messages) == ["q2", "a2"]
    worker_b.mark_consolidated(archived, 2)  # consolidating the archived session writes to its own keys
    assert worker_b.get("s:1").consolidated == 0
    assert shared.client.hget(archived.meta_key, "consolidated") == "2"


def test_summaries_list_live_sessions_with_their_message_counts(shared: RedisState) -> None:
    store = RedisSessionStore(shared)
    store.append(store.get("a:1"), exchange(1))
    store.append(store.get("b:1"), exchange(1) + exchange(2))
    store.reset("a:1")
    assert [(s["key"], s["messages"]) for s in store.summaries(0)] == [("b:1", 4)]


def test_the_cache_stays_within_its_bounds(shared: RedisState) -> None:
    store = RedisSessionStore(shared, max_sessions=3)
    for n in range(5):
        store.append(store.get(f"s:{n}"), exchange(n))
    assert store.cached == 3
    assert contents(store.get("s:0").messages) == ["q0", "a0"]
    assert store.cached_bytes == sum(store.get(f"s:{n}").size for n in (0, 3, 4))


def test_appending_nothing_changes_nothing(shared: RedisState) -> None:
    store = RedisSessionStore(shared)
    session = store.get("s:1")
    store.append(session, [])
    assert session.total == 0 and RedisSessionStore(shared).get("s:1").total == 0
