"""`relaybot sessions CHAT --resume N` on the control socket: the owner's /resume, put in the chat's lane."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.bus import ChatRef, InboundMessage, Trust
from bot.ops.control import Handler

CLI_SENDER = "cli"


def session_handlers(publish: Callable[[InboundMessage], Awaitable[Any]]) -> dict[str, Handler]:
    """The `sessions.resume` op: `/resume N` from the owner, run after the chat's running turn; the chat is told."""

    async def resume(request: dict[str, Any]) -> dict[str, Any]:
        try:
            chat = ChatRef.parse(str(request.get("chat")))
        except ValueError as exc:
            return {"ok": False, "error": str(exc)}
        number = request.get("number")
        if not isinstance(number, int) or isinstance(number, bool) or number < 1:
            return {"ok": False, "error": "the number is one of /sessions' numbers: 1, 2, …"}
        await publish(InboundMessage(chat, CLI_SENDER, f"/resume {number}", Trust.OWNER, "owner (relaybot CLI)"))
        return {"ok": True}

    return {"sessions.resume": resume}
