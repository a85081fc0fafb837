"""`relaybot doctor` for Discord: users/@me with the bot token."""

from __future__ import annotations

from typing import Any

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check
from bot.setup.credentials import Refused, probe_token


async def check_discord(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """The bot token's line."""
    return [await probe_token((name, where), "token", "token", section, timeout, _users_me)]


async def _users_me(http: Any, base: str, token: str) -> str:
    async with http.get(base.rstrip("/") + "/users/@me", headers={"Authorization": f"Bot {token}"}) as response:
        body = await response.json(content_type=None)
        if response.status != 200:
            raise Refused(str(body.get("message") or response.status))
    return str(body.get("username"))
