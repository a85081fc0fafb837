"""The agent RPC on a WebSocket: `req` frames answered by `res` frames, the events of watched runs, owners' ticks."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiohttp import web

from channels.api.frames import Frame
from channels.api.hub import OWNERS
from channels.api.rpc import methods as rpc
from channels.api.rpc.methods import RpcError, RunChannel
from channels.api.rpc.runs import run_topic
from channels.api.web.auth import Caller

logger = logging.getLogger(__name__)


class WsCalls:
    """One connection's calls, each in its own task so a long `agent.wait` never holds up the others."""

    def __init__(self, channel: RunChannel, caller: Caller, socket: web.WebSocketResponse) -> None:
        self._channel = channel
        self._caller = caller
        self._socket = socket
        self._frames: asyncio.Queue[Frame] = asyncio.Queue()
        self._topics: set[str] = set()  # the runs it watches, and for an owner what belongs to no session
        self._tasks: set[asyncio.Task[None]] = set()
        self._writer = asyncio.create_task(self._forward(), name="ws:runs")
        if caller.is_owner:
            self._watch_topic(OWNERS)

    def call(self, frame: Frame) -> None:
        """Answer `{"type": "req", id, method, params}` with `{"type": "res", id, ok, payload | error}`."""
        task = asyncio.create_task(self._answer(frame), name=f"ws:req:{frame.get('method')}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Cancel the calls in flight and stop watching runs."""
        tasks = [*self._tasks, self._writer]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for topic in self._topics:
            self._channel.hub.unwatch(topic, self._frames)

    async def _answer(self, frame: Frame) -> None:
        params = frame.get("params", {})
        reply: Frame = {"type": "res", "id": frame.get("id")}
        try:
            if not isinstance(params, dict):
                raise RpcError("params is a JSON object")
            reply |= {"ok": True, "payload": await self._run(str(frame.get("method")), params)}
        except RpcError as error:
            reply |= {"ok": False, "error": {"message": error.message, "status": error.status}}
        if not self._socket.closed:
            await self._socket.send_json(reply)

    async def _run(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "agent":
            return await rpc.start(self._channel, self._caller, params, lambda run: self._watch(run.id))
        if method == "agent.wait":
            return await rpc.wait(self._channel, self._caller, params)
        if method == "agent.subscribe":
            run = rpc.find(self._channel, self._caller, params)
            self._watch(run.id)
            return {"runId": run.id, "ended": run.done.is_set()}
        raise RpcError(f"unknown method {method!r}; use agent, agent.wait or agent.subscribe")

    def _watch(self, run_id: str) -> None:
        self._watch_topic(run_topic(run_id))

    def _watch_topic(self, topic: str) -> None:
        if topic not in self._topics:
            self._topics.add(topic)
            self._channel.hub.watch(topic, self._frames)

    async def _forward(self) -> None:
        while True:
            frame = await self._frames.get()
            await self._socket.send_json(frame)
            if frame.get("stream") == "lifecycle" and frame["data"]["phase"] in ("end", "error"):
                topic = run_topic(frame["runId"])
                self._topics.discard(topic)
                self._channel.hub.unwatch(topic, self._frames)
