"""The HTTP proxy the environment names for a URL, read once per host instead of on every request."""

from __future__ import annotations

from urllib.parse import urlsplit


def proxy_for(url: str) -> str | None:
    """The proxy `HTTP_PROXY` / `HTTPS_PROXY` / `ALL_PROXY` name for `url`, unless `NO_PROXY` exempts its host.

    aiohttp's `trust_env` reads the environment (and ~/.netrc, in a thread) on every request, half a millisecond
    each; the clients read this once per connection pool or host instead.
    """
    import urllib.request  # 7 ms to import; only a connection pool being made needs it

    proxies = urllib.request.getproxies_environment()
    parts = urlsplit(url)
    if not proxies or urllib.request.proxy_bypass(parts.netloc):
        return None
    return proxies.get(parts.scheme) or proxies.get("all")


class ProxyBook:
    """`proxy_for`, remembered per scheme and host for the life of one connection pool."""

    def __init__(self) -> None:
        self._known: dict[str, str | None] = {}

    def __call__(self, url: str) -> str | None:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self._known:
            self._known[origin] = proxy_for(origin)
        return self._known[origin]
