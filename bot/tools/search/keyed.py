"""The HTTP search providers: Brave and Tavily (with an API key) and SearXNG (a URL)."""

from __future__ import annotations

from typing import Any

from bot.errors import ToolError, http_failure
from bot.tools.search.provider import SearchHit, call_json, plain


class BraveSearch:
    """The Brave Search API (`X-Subscription-Token`)."""

    name = "Brave"

    def __init__(self, api_key: str, api_base: str, timeout: float = 15.0) -> None:
        self._api_key = api_key
        self._url = api_base.rstrip("/") + "/web/search"
        self._timeout = timeout

    async def search(self, query: str, count: int) -> list[SearchHit]:
        headers = {"Accept": "application/json", "X-Subscription-Token": self._api_key}
        answer = await call_json(
            self.name, "GET", self._url, self._timeout, params={"q": query, "count": count}, headers=headers
        )
        if answer.status != 200:
            raise http_failure(answer.status, _brave_failure(answer.status, answer.body))
        results = ((answer.body or {}).get("web") or {}).get("results") or []
        return [SearchHit(plain(r.get("title")), str(r.get("url", "")), plain(r.get("description"))) for r in results]


def _brave_failure(status: int, body: Any) -> str:
    """What a failed Brave call means for the owner, from its status and error body."""
    error = body.get("error") if isinstance(body, dict) else None
    code = str(error.get("code", "")) if isinstance(error, dict) else ""
    if status in (401, 403) or code.startswith("SUBSCRIPTION_TOKEN"):
        return "the Brave Search API refused the key; the owner needs to check tools.web_search.api_key."
    detail = error.get("detail") if isinstance(error, dict) else None
    return f"the Brave Search API answered HTTP {status}" + (f": {detail}" if detail else ".")


class TavilySearch:
    """The Tavily search API (`POST /search` with a bearer key)."""

    name = "Tavily"

    def __init__(self, api_key: str, api_base: str, timeout: float = 15.0) -> None:
        self._api_key = api_key
        self._url = api_base.rstrip("/") + "/search"
        self._timeout = timeout

    async def search(self, query: str, count: int) -> list[SearchHit]:
        headers = {"Authorization": f"Bearer {self._api_key}"}
        body = {"query": query, "max_results": count, "search_depth": "basic"}
        answer = await call_json(self.name, "POST", self._url, self._timeout, json=body, headers=headers)
        if answer.status in (401, 403):
            raise ToolError("Tavily refused the key; the owner needs to check tools.web_search.tavily_api_key.")
        if answer.status != 200:
            raise http_failure(answer.status, f"Tavily answered HTTP {answer.status}.")
        results = (answer.body or {}).get("results") or []
        return [SearchHit(plain(r.get("title")), str(r.get("url", "")), plain(r.get("content"))) for r in results]


class SearxngSearch:
    """A SearXNG instance's JSON API (`/search?format=json`; the instance must allow the json format)."""

    name = "SearXNG"

    def __init__(self, url: str, timeout: float = 15.0) -> None:
        self._url = url.rstrip("/") + "/search"
        self._timeout = timeout

    async def search(self, query: str, count: int) -> list[SearchHit]:
        params = {"q": query, "format": "json"}
        answer = await call_json(self.name, "GET", self._url, self._timeout, params=params)
        if answer.status == 403:
            raise ToolError("the SearXNG instance refused the JSON format; enable `json` in its search.formats.")
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise http_failure(answer.status, f"the SearXNG instance answered HTTP {answer.status}.")
        results = answer.body.get("results") or []
        return [SearchHit(plain(r.get("title")), str(r.get("url", "")), plain(r.get("content"))) for r in results]
