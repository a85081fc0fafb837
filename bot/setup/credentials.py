"""Asking each platform whether our credentials are accepted: Telegram getMe, Discord users/@me, Slack auth.test."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from bot.config.schema_channels import ChannelSection
    from bot.setup.check import Check


class Refused(Exception):
    """The platform answered, and said no; the message says what it said."""


async def check_channel(name: str, section: ChannelSection, timeout: float) -> list[Check]:
    """One line per credential of an enabled channel."""
    if name == "slack":
        return [
            await _probe(name, "bot token", "bot_token", section, timeout, _slack_bot),
            await _probe(name, "app token", "app_token", section, timeout, _slack_app),
        ]
    probe = _telegram if name == "telegram" else _discord
    return [await _probe(name, "token", "token", section, timeout, probe)]


async def _probe(name: str, what: str, key: str, section: Any, timeout: float, call: Any) -> Check:
    import aiohttp

    from bot.setup.check import Check

    label = f"{name} {what}"
    token = getattr(section, key).get_secret_value()
    setting = f"channels.{name}.{key}"
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


async def _telegram(http: Any, base: str, token: str) -> str:
    async with http.get(f"{base}{token}/getMe") as response:
        body = await response.json(content_type=None)
    if not body.get("ok"):
        raise Refused(str(body.get("description") or response.status))
    return "@" + str(body["result"].get("username"))


async def _discord(http: Any, base: str, token: str) -> str:
    async with http.get(base.rstrip("/") + "/users/@me", headers={"Authorization": f"Bot {token}"}) as response:
        body = await response.json(content_type=None)
        if response.status != 200:
            raise Refused(str(body.get("message") or response.status))
    return str(body.get("username"))


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
