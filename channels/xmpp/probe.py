"""`relaybot doctor` for XMPP: reach channels.xmpp's server and log in with its JID and password."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from bot.config.channels.base import ChannelSection
from bot.errors import ChannelError, ChannelUnavailable
from bot.setup.check import Check

if TYPE_CHECKING:
    from bot.config.channels.xmpp import XmppConfig


async def check_xmpp(name: str, config: ChannelSection, timeout: float, where: str) -> list[Check]:
    """Log in as the bot would (a resource of its own, so a running gateway is not disturbed), then log out."""
    from channels.xmpp.channel import XmppChannel

    section = cast("XmppConfig", config)
    if not section.jid:
        return [Check(name, "fail", f"{where}.jid is empty", f"set {where}.jid and {where}.password")]

    async def nowhere(message: object) -> None:
        return None

    probe = XmppChannel(nowhere, section.model_copy(update={"rooms": []}), connect_timeout=timeout)
    try:
        await probe.start()
    except ChannelUnavailable as exc:
        return [Check(name, "fail", str(exc), f"check {where}.host, {where}.port and {where}.tls")]
    except ChannelError as exc:
        return [Check(name, "fail", str(exc), f"check {where}.jid and {where}.password")]
    finally:
        await probe.stop()
    return [Check(name, "ok", f"{section.jid} logs in")]
