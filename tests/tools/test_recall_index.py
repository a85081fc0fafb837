from bot.tools.recall_index import Passage, best_passages, match_expression


def test_query_words_never_reach_fts5_as_syntax() -> None:
    assert match_expression('ducks" OR NEAR(x) -') == '"ducks"* OR "near"* OR "or"* OR "x"*'
    assert match_expression("?!") == ""


def test_passages_are_ranked_by_bm25_and_cut_at_the_limit() -> None:
    passages = [Passage(f"2026-01-{n:02d}", "history", f"note {n} about lunch") for n in range(1, 9)]
    passages.append(Passage("2026-02-01", "history", "the Berlin trip: Berlin hotel, Berlin flights"))
    found = best_passages(passages, "berlin lunch", limit=5)
    assert len(found) == 5
    assert found[0].date == "2026-02-01"


def test_no_match_finds_nothing() -> None:
    assert best_passages([Passage("2026-01-01", "history", "ducks")], "geese") == []
