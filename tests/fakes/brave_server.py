"""A fake Brave Search API on 127.0.0.1: GET /res/v1/web/search, answered in Brave's JSON shape."""

from __future__ import annotations

import time
import uuid
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

API_KEY = "brave-test-key"


def result(title: str, url: str, description: str) -> dict[str, Any]:
    """One web result as Brave returns it (snippets carry <strong> highlighting)."""
    return {"type": "search_result", "title": title, "url": url, "description": description, "language": "en"}


class FakeBrave(LoopbackServer):
    """Serves `results` to requests bearing the right X-Subscription-Token; records every request's query."""

    def __init__(self, results: list[dict[str, Any]], api_key: str = API_KEY) -> None:
        super().__init__()
        self.results = results
        self.api_key = api_key
        self.queries: list[dict[str, str]] = []
        self.throttle = 0  # answer this many more requests with 429 RATE_LIMITED

    @property
    def base_url(self) -> str:
        """The URL to configure as tools.web_search.api_base."""
        return f"http://127.0.0.1:{self.port}/res/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/res/v1/web/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        self.queries.append(dict(request.query))
        if request.headers.get("X-Subscription-Token") != self.api_key:
            return _error(422, "SUBSCRIPTION_TOKEN_INVALID", "The provided subscription token is invalid.")
        if self.throttle > 0:
            self.throttle -= 1
            return _error(429, "RATE_LIMITED", "Request rate limit exceeded for plan.")
        query = request.query.get("q", "")
        if not query:
            return _error(422, "VALIDATION", "Unable to validate request parameter(s).")
        count = int(request.query.get("count", "20"))
        return web.json_response(
            {
                "type": "search",
                "query": {"original": query, "show_strict_warning": False},
                "mixed": {"type": "mixed", "main": [{"type": "web", "index": i, "all": False} for i in range(count)]},
                "web": {"type": "search", "results": self.results[:count], "family_friendly": True},
            }
        )


def _error(status: int, code: str, detail: str) -> web.Response:
    error = {"id": str(uuid.uuid4()), "status": status, "code": code, "detail": detail, "meta": {}}
    return web.json_response({"type": "ErrorResponse", "error": error, "time": int(time.time())}, status=status)
