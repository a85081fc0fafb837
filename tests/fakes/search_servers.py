"""Fake search providers on 127.0.0.1: Tavily's JSON API, a SearXNG instance, DuckDuckGo's HTML results page.

Each serves `results` (title, url, snippet) in its provider's wire shape, records the queries it was asked,
and answers the next `throttle` requests with its provider's rate-limit answer (429; DuckDuckGo's is 202).
"""

from __future__ import annotations

import html

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

TAVILY_KEY = "tvly-test-key"
Hit = tuple[str, str, str]


class _FakeServer(LoopbackServer):
    """A search provider's fake; subclasses add their routes."""

    def __init__(self, results: list[Hit]) -> None:
        super().__init__()
        self.results = results
        self.queries: list[str] = []
        self.throttle = 0
        self.retry_after: int | None = None

    def throttled(self, status: int = 429) -> web.Response | None:
        """The rate-limit answer while `throttle` lasts, else None."""
        if self.throttle <= 0:
            return None
        self.throttle -= 1
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
        return web.Response(status=status, text="slow down", headers=headers)


class FakeTavily(_FakeServer):
    """POST /search with `Authorization: Bearer <key>` and a JSON body, as api.tavily.com takes it."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.queries.append(body["query"])
        if request.headers.get("Authorization") != f"Bearer {TAVILY_KEY}":
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401)
        if (limited := self.throttled()) is not None:
            return limited
        found = [{"title": t, "url": u, "content": s, "score": 0.9} for t, u, s in self.results]
        return web.json_response(
            {"query": body["query"], "results": found[: body.get("max_results", 5)], "response_time": 0.5}
        )


class FakeSearxng(_FakeServer):
    """GET /search?q=…&format=json, as a SearXNG instance with the json format enabled answers."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        self.queries.append(request.query["q"])
        if request.query.get("format") != "json":
            return web.Response(status=403, text="Forbidden")
        if (limited := self.throttled()) is not None:
            return limited
        found = [{"title": t, "url": u, "content": s, "engine": "fake"} for t, u, s in self.results]
        return web.json_response({"query": request.query["q"], "number_of_results": len(found), "results": found})


class FakeDuckDuckGo(_FakeServer):
    """POST /html/ (form field `q`), answered with result blocks shaped like html.duckduckgo.com's."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/html/"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/html/", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        form = await request.post()
        self.queries.append(str(form["q"]))
        if (limited := self.throttled(status=202)) is not None:
            return limited
        blocks = "".join(_ddg_block(*hit) for hit in self.results)
        ad = _ddg_block("Sponsored", "https://duckduckgo.com/y.js?ad_provider=x", "an ad")
        page = f'<html><body><div id="links" class="results">{ad}{blocks}</div></body></html>'
        return web.Response(text=page, content_type="text/html")


def _ddg_block(title: str, url: str, snippet: str) -> str:
    href = html.escape(url, quote=True)
    return (
        '<div class="result results_links results_links_deep web-result">'
        '<div class="links_main links_deep result__body">'
        f'<h2 class="result__title"><a rel="nofollow" class="result__a" href="{href}">{html.escape(title)}</a></h2>'
        f'<a class="result__snippet" href="{href}">{snippet}</a>'
        "</div></div>"
    )
