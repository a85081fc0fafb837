"""Passage vectors beside a real memory index, in its SQLite file and in Redis (the same tests on both): what needs
embedding, exact nearest search, and keeping in step with the index and with other processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.memory.index.passages import ExchangePart, Passage
from bot.memory.index.protocols import IndexHome, ScopeIndex, VectorStore
from bot.memory.index.redis import vectors as redis_vectors
from bot.memory.index.redis.store import RedisIndexes
from bot.sessions.logs import Cursor
from tests.fakes.embeddings import embed

DAY = 86400.0
SCOPE = "memory"


def entries(index: ScopeIndex, *texts: str, ts: float = 1.7e9) -> None:
    passages = [Passage("entry", ts + i * DAY, "", text) for i, text in enumerate(texts)]
    was = index.mark("history")
    index.add_entries(passages, "history", was, f"{was}+{len(texts)}")


def embed_all(store: VectorStore) -> int:
    pending = store.pending(100)
    store.store(pending, [embed(passage.text) for passage in pending])
    return len(pending)


@pytest.fixture
def index(tmp_path: Path, index_home: IndexHome) -> ScopeIndex:
    """A scope's fresh index, on SQLite and on Redis."""
    return index_home.open(SCOPE, tmp_path / "index.sqlite3")


@pytest.fixture
def store(index: ScopeIndex, index_home: IndexHome) -> VectorStore:
    """The index's vectors for the fake model, where the index is kept."""
    return index_home.vectors(SCOPE, index.path, "fake-embed")


def test_passages_are_embedded_once_and_found_by_meaning(index: ScopeIndex, store: VectorStore) -> None:
    entries(index, "We walked the Quiraing trail on Skye", "Booked the dentist for Tuesday", "Bought a red bicycle")
    assert embed_all(store) == 3
    assert store.pending(100) == []
    found = store.nearest(embed("that hiking trail on Skye"), 2, None, None)
    assert [index.passages(found)[rowid].passage.asked for rowid in found][0] == "We walked the Quiraing trail on Skye"
    assert len(found) == 2


def test_passages_below_the_floor_are_no_hits(index: ScopeIndex, store: VectorStore) -> None:
    entries(index, "Bought a red bicycle", "The red bicycle has a flat tyre")
    embed_all(store)
    assert store.nearest(embed("zebras in the savannah"), 5, None, None, floor=0.3) == []
    assert len(store.nearest(embed("flat tyre"), 5, None, None, floor=0.3)) == 1


def test_dates_narrow_the_search(index: ScopeIndex, store: VectorStore) -> None:
    entries(index, "trail one", "trail two", "trail three", ts=1.7e9)
    embed_all(store)
    found = store.nearest(embed("trail"), 5, since=1.7e9 + DAY, until=1.7e9 + 2 * DAY)
    assert [index.passages(found)[rowid].passage.asked for rowid in found] == ["trail two"]


def test_new_passages_reach_a_loaded_search_and_replaced_facts_leave_it(index: ScopeIndex, store: VectorStore) -> None:
    index.add_entries([Passage("fact", 1.7e9, "", "Likes green tea", "Food")], "memory", "", "a", replace="fact")
    embed_all(store)
    [tea] = store.nearest(embed("green tea"), 1, None, None)
    index.add_entries([Passage("fact", 1.7e9, "", "Drinks black coffee", "Food")], "memory", "a", "b", replace="fact")
    entries(index, "Planted green tomatoes")
    assert {p.text for p in store.pending(100)} == {"Food: Drinks black coffee", "Planted green tomatoes"}
    embed_all(store)
    found = store.nearest(embed("green tea"), 5, None, None)
    assert tea not in found or index.passages([tea])[tea].passage.asked != "Likes green tea"
    assert {index.passages(found)[rowid].passage.asked for rowid in found} == {
        "Drinks black coffee",
        "Planted green tomatoes",
    }


def test_a_rebuilt_index_starts_without_vectors_and_another_model_drops_them(
    index: ScopeIndex, store: VectorStore, index_home: IndexHome
) -> None:
    path = index.path
    entries(index, "alpha", "beta")
    embed_all(store)
    assert store.pending(10) == index_home.vectors(SCOPE, path, "fake-embed").pending(10) == []
    assert len(index_home.vectors(SCOPE, path, "other-model").pending(10)) == 2
    index.close()
    index_home.delete(SCOPE, path)
    index = index_home.open(SCOPE, path)
    entries(index, "gamma")
    assert [p.text for p in store.pending(10)] == ["gamma"]
    assert store.nearest(embed("alpha"), 5, None, None) == []


def test_no_index_means_nothing_to_do(tmp_path: Path, index_home: IndexHome) -> None:
    store = index_home.vectors("elsewhere", tmp_path / "missing.sqlite3", "fake-embed")
    assert store.pending(10) == []
    assert store.nearest([1.0, 0.0], 5, None, None) == []


def test_an_exchange_is_embedded_again_when_its_reply_arrives(index: ScopeIndex, store: VectorStore) -> None:
    asked = ExchangePart(True, 0, 1.7e9, "Ann", "Where shall we hike?")
    index.add_exchanges("telegram:1", [asked], Cursor("a"), Cursor("a", 10, 1), True)
    assert [p.text for p in store.pending(10)] == ["Where shall we hike?"]
    embed_all(store)
    reply = ExchangePart(False, 1, 1.7e9, "", "", ["The Quiraing loop on Skye"])
    index.add_exchanges("telegram:1", [reply], Cursor("a", 10, 1), Cursor("a", 20, 2), True)
    assert [p.text for p in store.pending(10)] == ["Where shall we hike?\nThe Quiraing loop on Skye"]
    embed_all(store)
    assert store.pending(10) == []
    assert len(store.nearest(embed("Quiraing"), 5, None, None)) == 1


def test_an_index_cleared_in_place_for_a_reindex_has_its_passages_embedded_again(
    index: ScopeIndex, store: VectorStore
) -> None:
    entries(index, "alpha", "beta", ts=1.7e9)
    embed_all(store)
    index.clear()
    entries(index, "gamma", "delta", ts=1.8e9)  # the same ids, other passages
    assert [p.text for p in store.pending(10)] == ["gamma", "delta"]
    embed_all(store)
    found = store.nearest(embed("gamma"), 1, None, None)
    assert index.passages(found)[found[0]].passage.asked == "gamma"


def test_another_process_finds_what_one_embedded_and_loses_what_the_index_dropped(
    index: ScopeIndex, store: VectorStore, index_home: IndexHome
) -> None:
    index.add_entries([Passage("fact", 1.7e9, "", "Likes green tea", "Food")], "memory", "", "a", replace="fact")
    entries(index, "Walked the Quiraing trail on Skye")
    other = index_home.vectors(SCOPE, index.path, "fake-embed")  # another process's store of the same scope
    assert other.nearest(embed("Quiraing trail"), 5, None, None) == []
    embed_all(store)
    assert store.pending(10) == other.pending(10) == []  # nothing left to embed, whoever looks
    [trail] = other.nearest(embed("Quiraing trail"), 1, None, None)
    assert index.passages([trail])[trail].passage.asked == "Walked the Quiraing trail on Skye"
    assert len(other.nearest(embed("green tea"), 5, None, None, floor=0.5)) == 1
    index.add_entries([Passage("fact", 1.7e9, "", "Drinks coffee", "Food")], "memory", "a", "b", replace="fact")
    assert [passage.text for passage in other.pending(10)] == ["Food: Drinks coffee"]  # its next catch-up
    assert other.nearest(embed("green tea"), 5, None, None, floor=0.5) == []


def test_a_vector_made_while_its_passage_was_replaced_is_not_kept_in_redis(tmp_path: Path, redis_url: str) -> None:
    shared = RedisState(redis_url, prefix="t")
    home = RedisIndexes(shared)
    index = home.open(SCOPE, tmp_path / "index.sqlite3")
    index.add_entries([Passage("fact", 1.7e9, "", "Likes green tea", "Food")], "memory", "", "a", replace="fact")
    store = home.vectors(SCOPE, index.path, "fake-embed")
    picked = store.pending(10)
    index.add_entries([Passage("fact", 1.8e9, "", "Drinks coffee", "Food")], "memory", "a", "b", replace="fact")
    store.store(picked, [embed(passage.text) for passage in picked])  # the embedding came back after the change
    assert [passage.text for passage in store.pending(10)] == ["Food: Drinks coffee"]  # the same id, its own text
    embed_all(store)
    [coffee] = store.nearest(embed("coffee"), 5, None, None, floor=0.5)
    assert index.passages([coffee])[coffee].passage.asked == "Drinks coffee"
    shared.client.close()


def test_one_process_embeds_a_scope_while_the_others_leave_it_the_work(tmp_path: Path, redis_url: str) -> None:
    shared = RedisState(redis_url, prefix="t")
    home = RedisIndexes(shared)
    index = home.open(SCOPE, tmp_path / "index.sqlite3")
    entries(index, "alpha", "beta", "gamma")
    first, second = (home.vectors(SCOPE, index.path, "fake-embed") for _ in range(2))
    picked = first.pending(2)
    assert [passage.text for passage in picked] == ["alpha", "beta"]
    assert second.pending(10) == []  # the first is at it
    first.store(picked, [embed(passage.text) for passage in picked])
    assert embed_all(first) == 1 and first.pending(10) == []  # done: it lets go
    entries(index, "delta")
    assert [passage.text for passage in second.pending(10)] == ["delta"]
    shared.client.close()


def test_another_process_reads_many_vectors_a_slice_at_a_time(
    tmp_path: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_vectors, "SLICE", 2)
    shared = RedisState(redis_url, prefix="t")
    home = RedisIndexes(shared)
    index = home.open(SCOPE, tmp_path / "index.sqlite3")
    texts = ["alpha trail", "beta lake", "gamma ridge", "delta bay", "epsilon moor"]
    entries(index, *texts)
    embed_all(home.vectors(SCOPE, index.path, "fake-embed"))
    other = home.vectors(SCOPE, index.path, "fake-embed")
    found = [other.nearest(embed(text), 1, None, None)[0] for text in texts]
    assert [index.passages([rowid])[rowid].passage.asked for rowid in found] == texts
    shared.client.close()
