import pytest

from bot.errors import SearchThrottled
from bot.tools.search.duckduckgo import DuckDuckGoSearch
from bot.tools.search.provider import SearchHit
from tests.fakes.search_servers import FakeDuckDuckGo


async def test_results_page_is_parsed_into_hits_without_ads() -> None:
    hits = [
        ("Duck", "https://en.wikipedia.org/wiki/Duck", "Ducks are <b>waterbirds</b>."),
        ("Two", "https://t.org/", ""),
    ]
    async with FakeDuckDuckGo(hits) as ddg:
        found = await DuckDuckGoSearch(ddg.url).search("ducks", 5)
    assert ddg.queries == ["ducks"]
    assert found == [
        SearchHit("Duck", "https://en.wikipedia.org/wiki/Duck", "Ducks are waterbirds."),
        SearchHit("Two", "https://t.org/", ""),
    ]


async def test_count_limits_the_hits() -> None:
    async with FakeDuckDuckGo([(f"R{i}", f"https://r.org/{i}", "s") for i in range(8)]) as ddg:
        found = await DuckDuckGoSearch(ddg.url).search("ducks", 3)
    assert [hit.title for hit in found] == ["R0", "R1", "R2"]


async def test_robot_check_answer_is_a_throttle() -> None:
    async with FakeDuckDuckGo([]) as ddg:
        ddg.throttle = 1
        with pytest.raises(SearchThrottled) as caught:
            await DuckDuckGoSearch(ddg.url).search("ducks", 5)
    assert caught.value.provider == "DuckDuckGo"
