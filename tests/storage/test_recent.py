"""The bounded recent-items map: the newest kept, the oldest dropped past the bound, reads optionally refreshing."""

import pytest

from bot.storage.recent import RecentMap, item_bytes


def test_past_its_capacity_the_oldest_item_goes() -> None:
    recent: RecentMap[str, int] = RecentMap(2)
    recent["a"], recent["b"], recent["c"] = 1, 2, 3
    assert list(recent.items()) == [("b", 2), ("c", 3)] and "a" not in recent and len(recent) == 2


def test_setting_an_item_again_makes_it_the_newest() -> None:
    recent: RecentMap[str, int] = RecentMap(2)
    recent["a"], recent["b"] = 1, 2
    recent["a"] = 10
    recent["c"] = 3
    assert list(recent) == ["a", "c"] and recent["a"] == 10


def test_a_plain_read_keeps_the_order_and_a_fresh_read_or_touch_refreshes() -> None:
    recent: RecentMap[str, int] = RecentMap(3)
    recent["a"], recent["b"], recent["c"] = 1, 2, 3
    assert recent.get("a") == 1 and recent.oldest() == "a"
    assert recent.get("a", fresh=True) == 1 and recent.oldest() == "b"
    recent.touch("b")
    assert list(recent) == ["c", "a", "b"]
    assert recent.get("zz") is None and recent.get("zz", 0) == 0


def test_pop_removes_and_returns_the_value() -> None:
    recent: RecentMap[str, int] = RecentMap(3)
    recent["a"] = 1
    assert recent.pop("a") == 1 and recent.pop("a") is None and len(recent) == 0 and recent.oldest() is None


def test_a_map_that_could_hold_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        RecentMap(0)


def test_past_its_max_weight_the_oldest_go_but_never_the_newest() -> None:
    recent: RecentMap[str, bytes] = RecentMap(10, weight=len, max_weight=5)
    recent["a"], recent["b"] = b"xx", b"yy"
    recent["c"] = b"zz"
    assert list(recent) == ["b", "c"] and recent.total_weight == 4
    recent["big"] = b"x" * 9  # heavier than the bound alone: kept, everything older goes
    assert list(recent) == ["big"] and recent.total_weight == 9


def test_a_value_that_grew_in_place_is_reweighed_and_the_others_make_room() -> None:
    recent: RecentMap[str, list[int]] = RecentMap(10, weight=len, max_weight=4)
    recent["a"], recent["b"] = [1], [2]
    recent["a"].extend([3, 4, 5])  # "a" is the oldest, and now the heaviest
    recent.reweigh("a")
    assert list(recent) == ["a"] and recent.total_weight == 4
    assert recent.pop("a") == [1, 3, 4, 5] and recent.total_weight == 0


def test_evicted_items_are_handed_to_on_evict_and_popped_ones_are_not() -> None:
    closed: list[tuple[str, int]] = []
    recent: RecentMap[str, int] = RecentMap(2, on_evict=lambda key, value: closed.append((key, value)))
    recent["a"], recent["b"], recent["c"] = 1, 2, 3
    recent.pop("b")
    assert closed == [("a", 1)] and list(recent) == ["c"]


def test_expire_drops_stale_items_from_the_oldest_until_a_fresh_one() -> None:
    recent: RecentMap[str, float] = RecentMap(10)
    recent["a"], recent["b"], recent["c"], recent["d"] = 1.0, 5.0, 2.0, 9.0
    assert recent.expire(lambda at: at < 3.0) == 1  # "c" is stale too, but behind the fresh "b"
    assert list(recent) == ["b", "c", "d"]


def test_past_its_max_bytes_the_oldest_go_each_weighed_by_its_key_and_value() -> None:
    recent: RecentMap[str, str | None] = RecentMap(max_bytes=3 * item_bytes("k0", None))
    recent["k0"], recent["k1"], recent["k2"] = None, None, None
    assert list(recent) == ["k0", "k1", "k2"]
    recent["k3"] = "x" * 100  # about two items' weight: the two oldest go
    assert list(recent) == ["k2", "k3"] and recent.total_weight == item_bytes("k2", None) + item_bytes("k3", "x" * 100)


def test_a_map_is_bounded_by_its_own_weight_or_by_bytes_not_both() -> None:
    with pytest.raises(ValueError, match="not both"):
        RecentMap(10, weight=len, max_bytes=100)
