"""`relaybot doctor` for Matrix: /account/whoami with the access token."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check


async def check_matrix(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """The access token's line (Matrix has one bot, under channels.matrix)."""
    return [await _matrix(section, timeout)]


async def _matrix(section: Any, timeout: float) -> Check:
    """GET /account/whoami with the access token; a password-only setup is logged in at start, so it is only noted."""
    import aiohttp

    homeserver, token = section.homeserver.rstrip("/"), section.access_token.get_secret_value()
    if not homeserver:
        return Check(
            "matrix homeserver", "fail", "channels.matrix.homeserver is empty", "set channels.matrix.homeserver"
        )
    if not token:
        if section.password.get_secret_value():
            return Check("matrix access token", "ok", "none; relaybot logs in with channels.matrix.password at start")
        fix = "set channels.matrix.access_token (or password), or disable the channel"
        return Check("matrix access token", "fail", "channels.matrix.access_token and password are empty", fix)
    host = urlsplit(homeserver).netloc
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
            headers = {"Authorization": f"Bearer {token}"}
            async with http.get(f"{homeserver}/_matrix/client/v3/account/whoami", headers=headers) as response:
                body = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return Check("matrix access token", "fail", f"cannot reach {host} ({type(exc).__name__})", "check homeserver")
    if response.status != 200:
        said = body.get("errcode") or response.status
        return Check(
            "matrix access token",
            "fail",
            f"rejected by {host}: {said}",
            "put a valid token in channels.matrix.access_token",
        )
    if body.get("user_id") != section.user_id:
        fix = f"set channels.matrix.user_id to {body.get('user_id')}"
        return Check(
            "matrix access token", "fail", f"the token is {body.get('user_id')}'s, not {section.user_id}'s", fix
        )
    return Check("matrix access token", "ok", f"accepted ({body.get('user_id')} on {host})")
