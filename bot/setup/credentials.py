"""Asking each platform whether our credentials are accepted: Telegram getMe, Discord users/@me, Slack auth.test,
Matrix /account/whoami, WhatsApp the phone number's Graph node."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from bot.config.channels.base import ChannelSection
    from bot.setup.check import Check


class Refused(Exception):
    """The platform answered, and said no; the message says what it said."""


async def check_channel(name: str, section: ChannelSection, timeout: float, where: str | None = None) -> list[Check]:
    """One line per credential of an enabled channel's bot; `name` is its channel key (`telegram@work` for a named
    account) and `where` the config key its credentials sit under (default `channels.<name>`)."""
    place = (name, where or f"channels.{name}")
    platform = name.partition("@")[0]
    if platform == "slack":
        return [
            await _probe(place, "bot token", "bot_token", section, timeout, _slack_bot),
            await _probe(place, "app token", "app_token", section, timeout, _slack_app),
        ]
    if platform == "matrix":
        return [await _matrix(section, timeout)]
    if platform == "whatsapp":
        return [
            await _probe(place, "access token", "access_token", section, timeout, _whatsapp),
            _whatsapp_secrets(section),
        ]
    if platform == "telegram":
        token = await _probe(place, "token", "token", section, timeout, _telegram)
        return [token] if token.status != "ok" else [token, await _telegram_privacy(name, section, timeout)]
    return [await _probe(place, "token", "token", section, timeout, _discord)]


async def _probe(place: tuple[str, str], what: str, key: str, section: Any, timeout: float, call: Any) -> Check:
    import aiohttp

    from bot.setup.check import Check

    name, where = place
    label = f"{name} {what}"
    token = getattr(section, key).get_secret_value()
    setting = f"{where}.{key}"
    if not token:
        return Check(label, "fail", f"{setting} is empty", f"set {setting}, or disable the channel")
    host = urlsplit(section.api_base).netloc
    try:
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as http:
            extra = (section.phone_number_id,) if name == "whatsapp" else ()
            identity = await call(http, section.api_base, token, *extra)
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


PRIVACY_OFF = (
    "to let the bot read the group messages it is not asked about (the context a mention brings): "
    "@BotFather → /setprivacy → Disable, then remove the bot from each group and add it again"
)


async def _telegram_privacy(name: str, section: Any, timeout: float) -> Check:
    """Whether Telegram's privacy mode is on (getMe `can_read_all_group_messages` false): what groups show the bot."""
    import aiohttp

    from bot.setup.check import Check

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


async def _matrix(section: Any, timeout: float) -> Check:
    """GET /account/whoami with the access token; a password-only setup is logged in at start, so it is only noted."""
    import aiohttp

    from bot.setup.check import Check

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


async def _whatsapp(http: Any, base: str, token: str, phone_number_id: str) -> str:
    async with http.get(f"{base.rstrip('/')}/{phone_number_id}", headers={"Authorization": f"Bearer {token}"}) as r:
        body = await r.json(content_type=None)
    if r.status != 200:
        raise Refused(str((body.get("error") or {}).get("message") or r.status))
    return str(body.get("display_phone_number") or body.get("id"))


def _whatsapp_secrets(section: Any) -> Check:
    """The webhook's two secrets cannot be asked about: Meta only uses them. Both must be set."""
    from bot.setup.check import Check

    missing = [key for key in ("app_secret", "verify_token") if not getattr(section, key).get_secret_value()]
    if missing:
        keys = " and ".join(f"channels.whatsapp.{key}" for key in missing)
        return Check("whatsapp webhook", "fail", f"{keys} not set", "copy them from the Meta app's WhatsApp settings")
    return Check(
        "whatsapp webhook", "ok", f"secrets set; Meta calls {section.webhook_path} on the gateway's HTTP server"
    )
