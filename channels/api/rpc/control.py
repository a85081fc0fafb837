"""`relaybot agent` on the control socket: the API channel's agent RPC, called as the owner of the machine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from bot.bus import Trust
from bot.config.schema_agents import API_CLI_CALLER
from bot.ops.control import Handler

if TYPE_CHECKING:
    from channels.api.rpc.methods import RunStarter
    from channels.api.web.auth import Caller

CLI_NAME = API_CLI_CALLER
"""The caller name of runs started from the command line: their sessions are `api:cli:<session>`."""
NO_API = "relaybot agent runs through the API channel; set channels.api.enabled: true and restart"
Call = Callable[["RunStarter", "Caller", dict[str, Any]], Awaitable[dict[str, Any]]]


def control_handlers(runs: RunStarter | None) -> dict[str, Handler]:
    """The `agent` and `agent.wait` ops; both refuse in one line when the API channel is off."""
    return {"agent": _handler(runs, "start"), "agent.wait": _handler(runs, "wait")}


def _handler(runs: RunStarter | None, method: str) -> Handler:
    """The op calling the API channel's RPC `method`, imported on the first call: the API channel's modules (aiohttp's
    server among them) are no part of a gateway's start when the channel is off."""

    async def handle(request: dict[str, Any]) -> dict[str, Any]:
        if runs is None:
            return {"ok": False, "error": NO_API}
        from channels.api.rpc import methods as rpc
        from channels.api.web.auth import Caller

        call: Call = getattr(rpc, method)
        try:
            return {"ok": True, **await call(runs, Caller(CLI_NAME, Trust.OWNER, is_owner=True), request)}
        except rpc.RpcError as error:
            return {"ok": False, "error": error.message}

    return handle
