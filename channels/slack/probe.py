"""`relaybot doctor` for Slack: auth.test with the bot token, apps.connections.open with the app token."""

from __future__ import annotations

from typing import Any

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check
from bot.setup.credentials import Refused, probe_token


async def check_slack(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """One line for the bot token, one for the app token (Socket Mode)."""
    return [
        await probe_token((name, where), "bot token", "bot_token", section, timeout, _slack_bot),
        await probe_token((name, where), "app token", "app_token", section, timeout, _slack_app),
    ]


async def _slack(http: Any, base: str, token: str, method: str) -> dict[str, Any]:
    url = base.rstrip("/") + "/" + method
    async with http.post(url, headers={"Authorization": f"Bearer {token}"}) as response:
        body = await response.json(content_type=None)
    if not body.get("ok"):
        raise Refused(str(body.get("error") or response.status))
    return body


async def _slack_bot(http: Any, base: str, token: str) -> str:
    body = await _slack(http, base, token, "auth.test")
    return f"{body.get('user') or body.get('user_id')} in {body.get('team') or body.get('team_id')}"


async def _slack_app(http: Any, base: str, token: str) -> str:
    await _slack(http, base, token, "apps.connections.open")
    return "Socket Mode available"
