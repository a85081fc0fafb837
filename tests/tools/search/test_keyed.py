import pytest

from bot.errors import SearchThrottled, ToolError
from bot.tools.search.keyed import BraveSearch, SearxngSearch, TavilySearch
from bot.tools.search.provider import SearchHit
from tests.fakes.brave_server import API_KEY, FakeBrave, result
from tests.fakes.search_servers import TAVILY_KEY, FakeSearxng, FakeTavily

HITS = [("Duck", "https://en.wikipedia.org/wiki/Duck", "A <b>duck</b> &amp; more"), ("Mallard", "https://m.org", "")]


async def test_brave_hits_lose_their_highlighting() -> None:
    results = [result("Duck", "https://en.wikipedia.org/wiki/Duck", "<strong>Duck</strong> is the name &amp; more")]
    async with FakeBrave(results) as brave:
        hits = await BraveSearch(API_KEY, brave.base_url).search("ducks", 2)
    assert brave.queries == [{"q": "ducks", "count": "2"}]
    assert hits == [SearchHit("Duck", "https://en.wikipedia.org/wiki/Duck", "Duck is the name & more")]


async def test_brave_with_a_wrong_key_says_the_key_was_refused() -> None:
    async with FakeBrave([]) as brave:
        with pytest.raises(ToolError, match="refused the key.*tools.web_search.api_key"):
            await BraveSearch("wrong", brave.base_url).search("ducks", 5)


async def test_brave_429_is_a_throttle() -> None:
    async with FakeBrave([]) as brave:
        brave.throttle = 1
        with pytest.raises(SearchThrottled) as caught:
            await BraveSearch(API_KEY, brave.base_url).search("ducks", 5)
    assert caught.value.provider == "Brave"


async def test_tavily_sends_the_key_as_a_bearer_and_returns_hits() -> None:
    async with FakeTavily(HITS) as tavily:
        hits = await TavilySearch(TAVILY_KEY, tavily.base_url).search("ducks", 1)
        with pytest.raises(ToolError, match="Tavily refused the key.*tavily_api_key"):
            await TavilySearch("tvly-wrong", tavily.base_url).search("ducks", 1)
    assert hits == [SearchHit("Duck", "https://en.wikipedia.org/wiki/Duck", "A duck & more")]


async def test_tavily_429_carries_its_retry_after() -> None:
    async with FakeTavily(HITS) as tavily:
        tavily.throttle, tavily.retry_after = 1, 42
        with pytest.raises(SearchThrottled) as caught:
            await TavilySearch(TAVILY_KEY, tavily.base_url).search("ducks", 1)
    assert caught.value.retry_after == 42


async def test_searxng_asks_for_json_and_returns_hits() -> None:
    async with FakeSearxng(HITS) as searxng:
        hits = await SearxngSearch(searxng.url).search("ducks", 5)
    assert searxng.queries == ["ducks"]
    assert [hit.title for hit in hits] == ["Duck", "Mallard"]
