"""`relaybot doctor` for Teams: the app id and secret exchanged for a Connector token; the webhook's path."""

from __future__ import annotations

from typing import Any

from bot.config.channels.base import ChannelSection
from bot.errors import ChannelError, ChannelUnavailable
from bot.setup.check import Check


async def check_teams(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """One line for the app's credentials (a client-credentials token), naming the key at fault."""
    import aiohttp

    from channels.teams.credentials import BotCredentials

    config: Any = section
    label = f"{name} app"
    for key, fix in (("app_id", "copy the Azure Bot's Microsoft App ID"), ("app_password", "add a client secret")):
        value = getattr(config, key)
        if not (value if isinstance(value, str) else value.get_secret_value()):
            return [Check(label, "fail", f"{where}.{key} is empty", fix)]
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
        secret = config.app_password.get_secret_value()
        credentials = BotCredentials(http, config.token_endpoint(), config.app_id, secret, config.token_scope)
        try:
            await credentials.token()
        except ChannelUnavailable as exc:
            return [Check(label, "fail", f"cannot get a token ({exc})", f"check the network and {where}.token_url")]
        except ChannelError as exc:
            return [Check(label, "fail", f"{exc}", f"check {where}.app_password, {where}.app_id and {where}.tenant_id")]
    return [Check(label, "ok", f"token granted; Teams calls {config.webhook_path} on the gateway's HTTP server")]
