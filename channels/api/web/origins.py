"""Which web pages may drive the API from a browser: the server's own origin and `channels.api.allowed_origins`."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from aiohttp import web


class OriginPolicy:
    """Refuses browser requests sent by pages of other origins; requests without an Origin (scripts) pass."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self._allowed = {origin.rstrip("/").lower() for origin in allowed}

    def allows(self, request: web.Request) -> bool:
        """Whether the request has no Origin, or one of the same host and port, or a listed one."""
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        origin = origin.rstrip("/").lower()
        return origin in self._allowed or urlsplit(origin).netloc == request.host.lower()

    def check(self, request: web.Request) -> None:
        """Raise HTTPForbidden for a page of another origin."""
        if not self.allows(request):
            raise web.HTTPForbidden(text="requests from this origin are not allowed (see channels.api.allowed_origins)")
