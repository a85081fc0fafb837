"""`relaybot agent` on the control socket: the API channel's agent RPC, called as the owner of the machine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from bot.bus import Trust
from bot.config.schema_agents import API_CLI_CALLER
from bot.ops.control import Handler
from channels.api.rpc.methods import RpcError, RunStarter, start, wait
from channels.api.web.auth import Caller

CLI_NAME = API_CLI_CALLER
"""The caller name of runs started from the command line: their sessions are `api:cli:<session>`."""
NO_API = "relaybot agent runs through the API channel; set channels.api.enabled: true and restart"
Call = Callable[[RunStarter, Caller, dict[str, Any]], Awaitable[dict[str, Any]]]


def control_handlers(runs: RunStarter | None) -> dict[str, Handler]:
    """The `agent` and `agent.wait` ops; both refuse in one line when the API channel is off."""
    return {"agent": _handler(runs, start), "agent.wait": _handler(runs, wait)}


def _handler(runs: RunStarter | None, call: Call) -> Handler:
    owner = Caller(CLI_NAME, Trust.OWNER, is_owner=True)

    async def handle(request: dict[str, Any]) -> dict[str, Any]:
        if runs is None:
            return {"ok": False, "error": NO_API}
        try:
            return {"ok": True, **await call(runs, owner, request)}
        except RpcError as error:
            return {"ok": False, "error": error.message}

    return handle
