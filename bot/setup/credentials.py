"""Asking a platform whether a bot's token is accepted: the shared part of the platforms' credential probes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from bot.setup.check import Check

TokenCall = Callable[[Any, str, str], Awaitable[str]]
"""call(aiohttp session, api base, token): who the token is, or Refused."""


class Refused(Exception):
    """The platform answered, and said no; the message says what it said."""


async def probe_token(
    place: tuple[str, str], what: str, key: str, section: Any, timeout: float, call: TokenCall
) -> Check:
    """One credential at `section.<key>` asked about at `section.api_base` by `call`; `place` is (channel key,
    config key of the section)."""
    import aiohttp

    name, where = place
    label = f"{name} {what}"
    token = getattr(section, key).get_secret_value()
    setting = f"{where}.{key}"
    if not token:
        return Check(label, "fail", f"{setting} is empty", f"set {setting}, or disable the channel")
    host = urlsplit(section.api_base).netloc
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
            identity = await call(http, section.api_base, token)
    except Refused as exc:
        return Check(label, "fail", f"rejected by {host}: {exc}", f"put a valid token in {setting}")
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return Check(label, "fail", f"cannot reach {host} ({type(exc).__name__})", "check the network and api_base")
    return Check(label, "ok", f"accepted ({identity})")
