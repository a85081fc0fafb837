"""What every response carries and no request may: security headers on all, a token in the URL on none."""

from __future__ import annotations

from aiohttp import web
from aiohttp.typedefs import Handler

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


@web.middleware
async def refuse_tokens_in_urls(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A `?token=` ends up in history, proxy logs and Referer headers: refuse it rather than use it."""
    if "token" in request.query:
        raise web.HTTPBadRequest(text="tokens are not accepted in URLs; log in on the page or send a Bearer header")
    return await handler(request)


async def add_security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """Put the security headers on a response about to be sent (pages, files, JSON, errors, upgrades)."""
    response.headers.update(SECURITY_HEADERS)


def install(app: web.Application) -> None:
    """Add the URL-token refusal and the security headers to an app."""
    app.middlewares.append(refuse_tokens_in_urls)
    app.on_response_prepare.append(add_security_headers)
