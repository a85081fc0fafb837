"""`relaybot doctor` for Mattermost: the token against /api/v4/users/me, and whether buttons and slash commands have
a way back to the gateway."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.mattermost import MattermostConfig


async def check_mattermost(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """The token against the server, then whether buttons and slash commands can call the gateway back."""
    import aiohttp

    config = cast("MattermostConfig", section)
    label, token = f"{name} token", config.token.get_secret_value()
    if not config.url:
        return [Check(label, "fail", f"{where}.url is empty", f"set {where}.url to the server's address")]
    if not token:
        return [Check(label, "fail", f"{where}.token is empty", f"set {where}.token, the bot's access token")]
    url = f"{config.url.rstrip('/')}/api/v4/users/me"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.get(url, headers={"Authorization": f"Bearer {token}"}) as response,
        ):
            body = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        fix = f"check {where}.url and that the server is up"
        return [Check(label, "fail", f"cannot reach {config.url} ({type(exc).__name__})", fix)]
    if response.status != 200 or not isinstance(body, dict):
        said = body.get("message") if isinstance(body, dict) else None
        fix = f"put the bot account's access token in {where}.token"
        return [Check(label, "fail", f"rejected by the server: {said or response.status}", fix)]
    token_check = Check(label, "ok", f"accepted (@{body.get('username')})")
    callbacks = f"{name} callbacks"
    if config.callback_url:
        return [token_check, Check(callbacks, "ok", f"buttons and slash commands call {config.callback_url}")]
    fix = f"set {where}.callback_url to the gateway's address as the Mattermost server reaches it"
    return [token_check, Check(callbacks, "warn", "no callback_url: numbered choices, no slash commands", fix)]
