"""Which providers web_search asks, in order, from `tools.web_search`."""

from __future__ import annotations

from bot.config.schema_tools import WebSearchConfig
from bot.tools.search.duckduckgo import DuckDuckGoSearch
from bot.tools.search.keyed import BraveSearch, SearxngSearch, TavilySearch
from bot.tools.search.provider import SearchProvider
from bot.tools.search.tool import WebSearchTool

MISSING_BRAVE_KEY = (
    "web search is not configured. The owner needs a Brave Search API key "
    "(https://brave.com/search/api/) in tools.web_search.api_key of the config, "
    "or in the BRAVE_API_KEY environment variable, and then a restart."
)
MISSING_TAVILY_KEY = (
    "web search is not configured. The owner needs a Tavily key in tools.web_search.api_key (or tavily_api_key)."
)


def providers_for(config: WebSearchConfig) -> list[SearchProvider]:
    """`auto`: every provider with a key or URL (Brave, Tavily, SearXNG), then DuckDuckGo; else the one named."""
    brave_key, tavily_key = config.api_key.get_secret_value(), config.tavily_api_key.get_secret_value()
    if config.provider == "tavily" and not tavily_key:  # `api_key` beside a named provider is that provider's key
        brave_key, tavily_key = "", brave_key
    timeout = config.timeout
    known: dict[str, SearchProvider | None] = {
        "brave": BraveSearch(brave_key, config.api_base, timeout) if brave_key else None,
        "tavily": TavilySearch(tavily_key, config.tavily_api_base, timeout) if tavily_key else None,
        "searxng": SearxngSearch(config.searxng_url, timeout) if config.searxng_url else None,
        "duckduckgo": DuckDuckGoSearch(config.duckduckgo_url, timeout),
    }
    if config.provider != "auto":
        chosen = known[config.provider]
        return [chosen] if chosen is not None else []
    return [provider for provider in known.values() if provider is not None]


def search_tool(config: WebSearchConfig) -> WebSearchTool:
    """The web_search tool for this config; a named provider without its key says what to configure."""
    missing = {"brave": MISSING_BRAVE_KEY, "tavily": MISSING_TAVILY_KEY}.get(config.provider, "")
    return WebSearchTool(providers_for(config), missing)
