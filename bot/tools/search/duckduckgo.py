"""DuckDuckGo's HTML results page through the `ddgs` package: search that needs no key and no sign-up."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.errors import SearchThrottled, ToolUnavailable, http_failure
from bot.tools.search.provider import SearchHit, retry_after

if TYPE_CHECKING:
    from ddgs.engines.duckduckgo import Duckduckgo

DEFAULT_URL = "https://html.duckduckgo.com/html/"
THROTTLED = frozenset({202, 403, 429})  # DuckDuckGo answers a robot check with 202 (or 403) rather than 429


class DuckDuckGoSearch:
    """ddgs's DuckDuckGo engine (its browser-like HTTP client and page parser), pointed at `url`."""

    name = "DuckDuckGo"

    def __init__(self, url: str = DEFAULT_URL, timeout: float = 15.0, region: str = "wt-wt") -> None:
        self._url = url
        self._timeout = timeout
        self._region = region

    async def search(self, query: str, count: int) -> list[SearchHit]:
        return await asyncio.to_thread(self._search, query, count)

    def _search(self, query: str, count: int) -> list[SearchHit]:
        from ddgs.exceptions import DDGSException

        engine = self._engine()
        payload = engine.build_payload(query=query, region=self._region, safesearch="moderate", timelimit=None)
        try:
            response = engine.http_client.request("POST", self._url, data=payload)
        except DDGSException as exc:
            raise ToolUnavailable(f"could not get an answer from DuckDuckGo ({type(exc).__name__}).") from exc
        if response.status_code in THROTTLED:
            raise SearchThrottled(self.name, retry_after(_headers(response)) or 0.0)
        if response.status_code != 200:
            raise http_failure(response.status_code, f"DuckDuckGo answered HTTP {response.status_code}.")
        results = engine.post_extract_results(engine.extract_results(response.text))
        return [SearchHit(r.title, r.href, r.body) for r in results[:count] if r.href]

    def _engine(self) -> Duckduckgo:
        from ddgs.engines.duckduckgo import Duckduckgo  # loaded on the first search, not at start-up

        return Duckduckgo(timeout=max(1, round(self._timeout)))


def _headers(response: object) -> dict[str, str]:
    """The response's headers when ddgs exposes them (it wraps primp's response), else none."""
    raw = getattr(getattr(response, "_resp", None), "headers", None)
    return dict(raw) if raw else {}
