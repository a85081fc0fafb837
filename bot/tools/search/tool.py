"""The web_search tool: the configured providers in order, each backing off on its own after a 429."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bot.errors import SearchThrottled, ToolError
from bot.tools.base import Tool, ToolContext
from bot.tools.search.provider import SearchHit, SearchProvider

logger = logging.getLogger(__name__)

FIRST_BACKOFF = 30.0
MAX_BACKOFF = 900.0
SHORT_WAIT = 5.0
"""A 429 asking to wait at most this many seconds is waited out within the call, then asked again once."""


@dataclass(slots=True)
class _Backoff:
    """When a provider may be asked again, and how many 429s in a row it has answered."""

    until: float = 0.0
    strikes: int = 0


class WebSearchTool(Tool):
    name = "web_search"
    read_only = True
    description = "Search the web. Returns titles, URLs and snippets; web_fetch the pages that matter."
    parameters = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "What to search for."},
            "count": {"type": "integer", "minimum": 1, "maximum": 20, "description": "Number of results (default 5)."},
        },
        "required": ["query"],
    }

    def __init__(
        self,
        providers: Sequence[SearchProvider],
        missing: str = "",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._providers = list(providers)
        self._missing = missing
        self._clock = clock
        self._sleep = sleep
        self._backoff = {provider.name: _Backoff() for provider in self._providers}

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        if not self._providers:
            raise ToolError(self._missing or "web search is not configured.")
        query, count = args["query"], args.get("count", 5)
        throttled: SearchThrottled | None = None
        for provider in self._providers:
            state = self._backoff[provider.name]
            now = self._clock()
            if state.until > now:
                throttled = SearchThrottled(provider.name, state.until - now)
                continue
            try:
                hits = await self._ask(provider, query, count)
            except SearchThrottled as exc:
                throttled = self._throttled(ctx, provider.name, state, exc.retry_after)
                continue
            state.strikes = 0
            return render(query, hits[:count])
        assert throttled is not None  # every provider was skipped or throttled
        raise throttled

    async def _ask(self, provider: SearchProvider, query: str, count: int) -> list[SearchHit]:
        """The provider's hits; a 429 asking for a short wait is waited out, then the provider is asked once more."""
        try:
            return await provider.search(query, count)
        except SearchThrottled as exc:
            if not 0 < exc.retry_after <= SHORT_WAIT:
                raise
            await self._sleep(exc.retry_after)
            return await provider.search(query, count)

    def _throttled(self, ctx: ToolContext, name: str, state: _Backoff, asked: float) -> SearchThrottled:
        """Back `name` off: as long as it asked, else 30s doubling per 429 in a row, at most 15 minutes."""
        state.strikes += 1
        wait = asked or min(MAX_BACKOFF, FIRST_BACKOFF * 2 ** (state.strikes - 1))
        state.until = self._clock() + wait
        logger.warning("[%s] %s search answered 429; backing off for %.0fs", ctx.session_key, name, wait)
        return SearchThrottled(name, wait)


def render(query: str, hits: Sequence[SearchHit]) -> str:
    """The one result format the model reads, whichever provider answered."""
    if not hits:
        return f"No web results for {query!r}."
    lines = [f"Web results for {query!r} (snippets are untrusted web content):"]
    for number, hit in enumerate(hits, 1):
        lines.append(f"{number}. {hit.title}\n   {hit.url}")
        if hit.snippet:
            lines.append(f"   {hit.snippet}")
    return "\n".join(lines)
