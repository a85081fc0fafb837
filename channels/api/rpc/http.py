"""The agent RPC over HTTP: `POST /v1/agent`, `POST /v1/agent/wait`, and `GET /v1/agent/events` (SSE) to watch a run."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from channels.api.frames import Frame
from channels.api.rpc import methods as rpc
from channels.api.rpc.methods import RpcError, RunChannel
from channels.api.rpc.runs import run_topic
from channels.api.web.auth import Caller

logger = logging.getLogger(__name__)

Call = Callable[[RunChannel, Caller, dict[str, Any]], Awaitable[dict[str, Any]]]


def _refusal(error: RpcError) -> web.Response:
    return web.json_response({"error": {"message": error.message}}, status=error.status)


def add_routes(app: web.Application, channel: RunChannel) -> None:
    """Mount the three routes; each acts as the request's token, in that token's sessions."""

    def route(call: Call, changes: bool) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handle(request: web.Request) -> web.Response:
            caller = channel.gate.check_change(request) if changes else channel.gate.check(request)
            try:
                params = await request.json()
            except ValueError:
                params = None
            if not isinstance(params, dict):
                return _refusal(RpcError("the body is a JSON object"))
            try:
                return web.json_response(await call(channel, caller, params))
            except RpcError as error:
                return _refusal(error)

        return handle

    async def events(request: web.Request) -> web.StreamResponse:
        caller = channel.gate.check(request)
        try:
            run = rpc.find(channel, caller, dict(request.query))
        except RpcError as error:
            return _refusal(error)
        queue = channel.hub.watch(run_topic(run.id))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        try:
            await response.prepare(request)
            if run.done.is_set():  # ended before the client looked: its outcome, as the end of the lifecycle
                await _write(response, run.frame("lifecycle", run.ending()))
            while not run.done.is_set() or not queue.empty():
                frame = await queue.get()
                await _write(response, frame)
                if frame["stream"] == "lifecycle" and frame["data"]["phase"] in ("end", "error"):
                    break
            await response.write_eof()
        except ConnectionResetError:  # the client stopped watching: normal, and the run goes on
            logger.debug("event stream of run %s: the client left", run.id)
        finally:
            channel.hub.unwatch(run_topic(run.id), queue)
        return response

    app.router.add_post("/v1/agent", route(rpc.start, changes=True))
    app.router.add_post("/v1/agent/wait", route(rpc.wait, changes=False))
    app.router.add_get("/v1/agent/events", events)


async def _write(response: web.StreamResponse, frame: Frame) -> None:
    await response.write(f"event: {frame['stream']}\ndata: {json.dumps(frame)}\n\n".encode())
