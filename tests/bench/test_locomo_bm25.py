"""The plain-BM25 comparator: FTS5 with porter stemming, stop words dropped, top five, neighbours."""

from locomo.bm25 import PlainBM25, with_neighbours


def searched(*texts: str) -> PlainBM25:
    index = PlainBM25()
    for text in texts:
        index.add(text)
    return index


def test_the_best_matching_exchange_comes_first_and_words_are_stemmed() -> None:
    index = searched("We went camping by the lake", "I painted a sunrise last year", "Painting relaxes me a lot")
    assert index.top("When did she paint the sunrise?") == [1, 2]
    assert index.found([2, 0]) == "Painting relaxes me a lot\n\nWe went camping by the lake"


def test_a_query_of_stop_words_only_finds_nothing() -> None:
    assert searched("what is it about").top("What was it about?") == []


def test_at_most_five_hits_are_returned() -> None:
    index = searched(*(f"kite number {n}" for n in range(8)))
    assert len(index.top("kite")) == 5


def test_neighbours_come_once_each_within_the_history() -> None:
    assert with_neighbours([0, 4, 3], 5) == [0, 1, 3, 4, 2]
    assert with_neighbours([], 3) == []
