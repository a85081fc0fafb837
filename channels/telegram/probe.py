"""`relaybot doctor` for Telegram: getMe with the token, then whether privacy mode hides group messages."""

from __future__ import annotations

from typing import Any

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check
from bot.setup.credentials import Refused, probe_token


async def check_telegram(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """The token's line, then (when it is accepted) privacy mode's."""
    token = await probe_token((name, where), "token", "token", section, timeout, _get_me)
    return [token] if token.status != "ok" else [token, await _telegram_privacy(name, section, timeout)]


async def _get_me(http: Any, base: str, token: str) -> str:
    async with http.get(f"{base}{token}/getMe") as response:
        body = await response.json(content_type=None)
    if not body.get("ok"):
        raise Refused(str(body.get("description") or response.status))
    return "@" + str(body["result"].get("username"))


PRIVACY_OFF = (
    "to let the bot read the group messages it is not asked about (the context a mention brings): "
    "@BotFather → /setprivacy → Disable, then remove the bot from each group and add it again"
)


async def _telegram_privacy(name: str, section: Any, timeout: float) -> Check:
    """Whether Telegram's privacy mode is on (getMe `can_read_all_group_messages` false): what groups show the bot."""
    import aiohttp

    token = section.token.get_secret_value()
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http,
            http.get(f"{section.api_base}{token}/getMe") as response,
        ):
            body = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        return Check(f"{name} privacy mode", "warn", f"unknown ({type(exc).__name__})")
    if (body.get("result") or {}).get("can_read_all_group_messages"):
        return Check(f"{name} privacy mode", "ok", "off: the bot reads every group message (for group context)")
    detail = "on: in groups the bot sees only commands, mentions of it and replies to it"
    return Check(f"{name} privacy mode", "ok", detail, PRIVACY_OFF)
