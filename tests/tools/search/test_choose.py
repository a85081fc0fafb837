import pytest
from pydantic import ValidationError

from bot.config.schema_tools import WebSearchConfig
from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.search.choose import providers_for, search_tool
from tests.fakes.search_servers import TAVILY_KEY, FakeDuckDuckGo, FakeSearxng, FakeTavily


def names(**config: object) -> list[str]:
    return [provider.name for provider in providers_for(WebSearchConfig.model_validate(config))]


def test_auto_without_keys_searches_duckduckgo() -> None:
    assert names() == ["DuckDuckGo"]


def test_auto_puts_configured_providers_before_duckduckgo() -> None:
    assert names(api_key="b", searxng_url="http://s") == ["Brave", "SearXNG", "DuckDuckGo"]
    assert names(tavily_api_key="t") == ["Tavily", "DuckDuckGo"]


def test_a_named_provider_is_the_only_one() -> None:
    assert names(provider="duckduckgo", api_key="b") == ["DuckDuckGo"]
    assert names(provider="tavily", tavily_api_key="t") == ["Tavily"]


async def test_a_key_beside_a_named_provider_is_that_providers_key(ctx: ToolContext) -> None:
    async with FakeTavily([("Otters", "https://o.org", "Otters hold hands.")]) as tavily:
        config = WebSearchConfig(provider="tavily", api_key=TAVILY_KEY, tavily_api_base=tavily.base_url)
        text = await search_tool(config).run({"query": "otters"}, ctx)
    assert "1. Otters" in text and tavily.queries == ["otters"]


def test_searxng_without_a_url_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(ValidationError, match="searxng_url"):
        WebSearchConfig.model_validate({"provider": "searxng"})


async def test_named_brave_without_a_key_tells_the_owner_what_to_configure(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="not configured.*tools.web_search.api_key.*BRAVE_API_KEY"):
        await search_tool(WebSearchConfig(provider="brave")).run({"query": "ducks"}, ctx)


async def test_auto_falls_back_to_duckduckgo_when_searxng_is_throttled(ctx: ToolContext) -> None:
    async with (
        FakeSearxng([("S", "https://s.org", "")]) as searxng,
        FakeDuckDuckGo([("D", "https://d.org", "")]) as ddg,
    ):
        searxng.throttle = 1
        tool = search_tool(WebSearchConfig(searxng_url=searxng.url, duckduckgo_url=ddg.url))
        text = await tool.run({"query": "ducks"}, ctx)
    assert "1. D\n   https://d.org" in text
    assert searxng.queries == ddg.queries == ["ducks"]


async def test_the_test_guard_keeps_keyless_search_off_the_internet(ctx: ToolContext) -> None:
    tool = search_tool(WebSearchConfig())  # auto, no key: DuckDuckGo at its real address
    with pytest.raises(RuntimeError, match="beyond loopback"):
        await tool.run({"query": "weather"}, ctx)
