"""The agent RPC: `agent` starts a run and answers at once, `agent.wait` waits for its end without stopping it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from bot.bus import ChatRef, EarlierMessage
from channels.api.hub import ApiSessions, session_chat
from channels.api.rpc.runs import Run, RunBook
from channels.api.web.auth import Caller

Watch = Callable[[Run], object] | None
"""Called with a run before it is published (to subscribe to its events), or None."""
MAX_TEXT = 32_000
WAIT_MS = 30_000
MAX_WAIT_MS = 600_000


class RpcError(Exception):
    """A call the API refuses; `message` is safe to show the client."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class RunStarter(Protocol):
    """What the RPC needs of the API channel: its runs, and starting one."""

    runs: RunBook

    async def start_run(
        self,
        caller: Caller,
        chat: ChatRef,
        text: str,
        idempotency_key: str | None = None,
        watch: Watch = None,
        conversation: tuple[EarlierMessage, ...] = (),
    ) -> Run:
        """Start a run in the caller's session with the caller's role."""


class RunChannel(ApiSessions, RunStarter, Protocol):
    """The API channel as the WebSocket and HTTP routes see it: sessions and runs."""


def _text(params: dict[str, Any], name: str) -> str | None:
    value = params.get(name)
    if value is not None and not isinstance(value, str):
        raise RpcError(f"{name} must be a string")
    return value


async def start(channel: RunStarter, caller: Caller, params: dict[str, Any], watch: Watch = None) -> dict[str, Any]:
    """`agent`: {message, session?, idempotencyKey?} -> {runId, acceptedAt}, before the turn runs."""
    message = _text(params, "message")
    if not message or not message.strip():
        raise RpcError("agent needs a message")
    if len(message) > MAX_TEXT:
        raise RpcError(f"a message is at most {MAX_TEXT} characters")
    chat = session_chat(caller, _text(params, "session"))
    run = await channel.start_run(caller, chat, message, _text(params, "idempotencyKey"), watch)
    return {"runId": run.id, "acceptedAt": run.accepted_at}


def find(channel: RunStarter, caller: Caller, params: dict[str, Any]) -> Run:
    """The caller's run named by `runId`; a 404 error when there is none."""
    run_id = _text(params, "runId")
    run = channel.runs.find(caller.name, run_id, caller.is_owner) if run_id else None
    if run is None:
        raise RpcError("no such run", 404)
    return run


async def wait(channel: RunStarter, caller: Caller, params: dict[str, Any]) -> dict[str, Any]:
    """`agent.wait`: {runId, timeoutMs?} -> {status: ok | error | timeout, startedAt, endedAt, error?, reply?}."""
    run = find(channel, caller, params)
    timeout_ms = params.get("timeoutMs", WAIT_MS)
    if not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool) or not 0 <= timeout_ms <= MAX_WAIT_MS:
        raise RpcError(f"timeoutMs is a whole number of milliseconds from 0 to {MAX_WAIT_MS}")
    return await channel.runs.wait(run, timeout_ms / 1000)
