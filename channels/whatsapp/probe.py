"""`relaybot doctor` for WhatsApp: the phone number's Graph node with the access token; the webhook's secrets set."""

from __future__ import annotations

from functools import partial
from typing import Any

from bot.config.channels.base import ChannelSection
from bot.setup.check import Check
from bot.setup.credentials import Refused, probe_token


async def check_whatsapp(name: str, section: ChannelSection, timeout: float, where: str) -> list[Check]:
    """One line for the access token, one for the webhook's secrets."""
    number = partial(_phone_number, phone_number_id=getattr(section, "phone_number_id", ""))
    return [
        await probe_token((name, where), "access token", "access_token", section, timeout, number),
        _whatsapp_secrets(section),
    ]


async def _phone_number(http: Any, base: str, token: str, phone_number_id: str) -> str:
    async with http.get(f"{base.rstrip('/')}/{phone_number_id}", headers={"Authorization": f"Bearer {token}"}) as r:
        body = await r.json(content_type=None)
    if r.status != 200:
        raise Refused(str((body.get("error") or {}).get("message") or r.status))
    return str(body.get("display_phone_number") or body.get("id"))


def _whatsapp_secrets(section: Any) -> Check:
    """The webhook's two secrets cannot be asked about: Meta only uses them. Both must be set."""
    missing = [key for key in ("app_secret", "verify_token") if not getattr(section, key).get_secret_value()]
    if missing:
        keys = " and ".join(f"channels.whatsapp.{key}" for key in missing)
        return Check("whatsapp webhook", "fail", f"{keys} not set", "copy them from the Meta app's WhatsApp settings")
    return Check(
        "whatsapp webhook", "ok", f"secrets set; Meta calls {section.webhook_path} on the gateway's HTTP server"
    )
