"""Passage vectors beside a real memory index: what needs embedding, exact nearest search, and keeping in step."""

from __future__ import annotations

from pathlib import Path

from bot.memory.index.passages import ExchangePart, Passage
from bot.memory.index.store import MemoryIndex
from bot.memory.index.vectors import PassageVectors
from bot.sessions.logs import Cursor
from tests.fakes.embeddings import embed

DAY = 86400.0


def entries(index: MemoryIndex, *texts: str, ts: float = 1.7e9) -> None:
    passages = [Passage("entry", ts + i * DAY, "", text) for i, text in enumerate(texts)]
    was = index.mark("history")
    index.add_entries(passages, "history", was, f"{was}+{len(texts)}")


def embed_all(store: PassageVectors) -> int:
    pending = store.pending(100)
    store.store(pending, [embed(passage.text) for passage in pending])
    return len(pending)


def test_passages_are_embedded_once_and_found_by_meaning(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    entries(index, "We walked the Quiraing trail on Skye", "Booked the dentist for Tuesday", "Bought a red bicycle")
    store = PassageVectors(index.path, "fake-embed")
    assert embed_all(store) == 3
    assert store.pending(100) == []
    found = store.nearest(embed("that hiking trail on Skye"), 2, None, None)
    assert [index.passages(found)[rowid].passage.asked for rowid in found][0] == "We walked the Quiraing trail on Skye"
    assert len(found) == 2


def test_passages_below_the_floor_are_no_hits(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    entries(index, "Bought a red bicycle", "The red bicycle has a flat tyre")
    store = PassageVectors(index.path, "fake-embed")
    embed_all(store)
    assert store.nearest(embed("zebras in the savannah"), 5, None, None, floor=0.3) == []
    assert len(store.nearest(embed("flat tyre"), 5, None, None, floor=0.3)) == 1


def test_dates_narrow_the_search(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    entries(index, "trail one", "trail two", "trail three", ts=1.7e9)
    store = PassageVectors(index.path, "fake-embed")
    embed_all(store)
    found = store.nearest(embed("trail"), 5, since=1.7e9 + DAY, until=1.7e9 + 2 * DAY)
    assert [index.passages(found)[rowid].passage.asked for rowid in found] == ["trail two"]


def test_new_passages_reach_a_loaded_search_and_replaced_facts_leave_it(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    index.add_entries([Passage("fact", 1.7e9, "", "Likes green tea", "Food")], "memory", "", "a", replace="fact")
    store = PassageVectors(index.path, "fake-embed")
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


def test_a_rebuilt_index_starts_without_vectors_and_another_model_drops_them(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    index = MemoryIndex.open(path)
    entries(index, "alpha", "beta")
    store = PassageVectors(path, "fake-embed")
    embed_all(store)
    assert PassageVectors(path, "fake-embed").pending(10) == []
    assert len(PassageVectors(path, "other-model").pending(10)) == 2
    index.close()
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        (path.parent / name).unlink(missing_ok=True)
    index = MemoryIndex.open(path)
    entries(index, "gamma")
    assert [p.text for p in store.pending(10)] == ["gamma"]
    assert store.nearest(embed("alpha"), 5, None, None) == []


def test_no_index_file_means_nothing_to_do(tmp_path: Path) -> None:
    store = PassageVectors(tmp_path / "missing.sqlite3", "fake-embed")
    assert store.pending(10) == []
    assert store.nearest([1.0, 0.0], 5, None, None) == []


def test_an_exchange_is_embedded_again_when_its_reply_arrives(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    asked = ExchangePart(True, 0, 1.7e9, "Ann", "Where shall we hike?")
    index.add_exchanges("telegram:1", [asked], Cursor("a"), Cursor("a", 10, 1), True)
    store = PassageVectors(index.path, "fake-embed")
    assert [p.text for p in store.pending(10)] == ["Where shall we hike?"]
    embed_all(store)
    reply = ExchangePart(False, 1, 1.7e9, "", "", ["The Quiraing loop on Skye"])
    index.add_exchanges("telegram:1", [reply], Cursor("a", 10, 1), Cursor("a", 20, 2), True)
    assert [p.text for p in store.pending(10)] == ["Where shall we hike?\nThe Quiraing loop on Skye"]
    embed_all(store)
    assert store.pending(10) == []
    assert len(store.nearest(embed("Quiraing"), 5, None, None)) == 1


def test_an_index_cleared_in_place_for_a_reindex_has_its_passages_embedded_again(tmp_path: Path) -> None:
    index = MemoryIndex.open(tmp_path / "index.sqlite3")
    entries(index, "alpha", "beta", ts=1.7e9)
    store = PassageVectors(index.path, "fake-embed")
    embed_all(store)
    index.clear()
    entries(index, "gamma", "delta", ts=1.8e9)  # the same ids, other passages
    assert [p.text for p in store.pending(10)] == ["gamma", "delta"]
    embed_all(store)
    found = store.nearest(embed("gamma"), 1, None, None)
    assert index.passages(found)[found[0]].passage.asked == "gamma"
