"""What a search provider is: a name and `search`, returning hits in one format; the JSON call they share."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Protocol

from bot.errors import SearchThrottled, ToolUnavailable

_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One web result, whichever provider found it."""

    title: str
    url: str
    snippet: str


class SearchProvider(Protocol):
    """A search backend; raises SearchThrottled on 429, ToolUnavailable on passing failures, else ToolError."""

    name: str

    async def search(self, query: str, count: int) -> list[SearchHit]: ...


def plain(text: Any) -> str:
    """Snippet text without the HTML highlighting providers put in it."""
    return html.unescape(_TAG.sub("", str(text or ""))).strip()


def retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header given in seconds, else None."""
    try:
        return max(0.0, float(headers.get("Retry-After", "")))
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class JsonAnswer:
    """A provider's HTTP status and decoded JSON body (None when it was not JSON)."""

    status: int
    body: Any


async def call_json(provider: str, method: str, url: str, timeout: float, **request: Any) -> JsonAnswer:
    """One HTTP call to a provider; 429 raises SearchThrottled, a failed connection ToolUnavailable."""
    import aiohttp  # loaded on the first search, not at start-up

    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.request(method, url, **request) as response,
        ):
            if response.status == 429:
                raise SearchThrottled(provider, retry_after(response.headers) or 0.0)
            try:
                body = await response.json(content_type=None)
            except ValueError:
                body = None
            return JsonAnswer(response.status, body)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise ToolUnavailable(f"could not get an answer from {provider} search ({type(exc).__name__}).") from exc
