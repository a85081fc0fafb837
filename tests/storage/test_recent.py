"""The bounded recent-items map: the newest kept, the oldest dropped past the bound, reads optionally refreshing."""

import pytest

from bot.storage.recent import RecentMap


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
