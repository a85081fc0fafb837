"""OpenAI-compatible `POST /v1/chat/completions` (plain or SSE) and `GET /v1/models`, answered by the agent."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from bot.bus import new_id
from bot.storage.recent import RecentMap
from channels.api.frames import Frame
from channels.api.hub import session_chat
from channels.api.openai.request import parse_completion
from channels.api.rpc.methods import RunChannel
from channels.api.rpc.runs import Run, run_topic

logger = logging.getLogger(__name__)

MODEL = "relaybot"
IDEMPOTENCY_HEADER = "Idempotency-Key"
REMEMBERED_OUTCOMES = 1000  # the latest completions answered under an idempotency key, per gateway
NO_RETRY = {"x-should-retry": "false"}  # the run failed for good: a retry would run the whole turn again


def add_routes(app: web.Application, channel: RunChannel) -> None:
    """Mount /v1/models and /v1/chat/completions."""
    locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
    outcomes: RecentMap[tuple[str, str], web.Response] = RecentMap(REMEMBERED_OUTCOMES)

    async def models(request: web.Request) -> web.Response:
        channel.gate.check(request)
        return web.json_response(
            {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "relaybot"}]}
        )

    async def completions(request: web.Request) -> web.StreamResponse:
        caller = channel.gate.check(request)
        try:
            body = await request.json()
        except ValueError:
            body = None
        asked = parse_completion(body)
        chat = session_chat(caller, asked.session)
        key = request.headers.get(IDEMPOTENCY_HEADER)
        async with locks[chat.session_key]:  # one request per session at a time: never two in one turn
            if key and (done := outcomes.get((caller.name, key))) is not None:
                return _again(done)
            frames: asyncio.Queue[Frame] = asyncio.Queue()

            def watch(run: Run) -> None:
                channel.hub.watch(run_topic(run.id), frames)

            run = await channel.start_run(caller, chat, asked.text, watch=watch, conversation=asked.conversation)
            try:
                if asked.stream:
                    return await _stream(request, run, _run_frames(frames), asked.include_usage)
                response = await _complete(run, _run_frames(frames))
                if key:
                    outcomes[(caller.name, key)] = response
                return response
            finally:
                channel.hub.unwatch(run_topic(run.id), frames)

    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", completions)


async def _run_frames(queue: asyncio.Queue[Frame]) -> AsyncIterator[Frame]:
    """A run's event frames up to and including its lifecycle end."""
    while True:
        frame = await queue.get()
        yield frame
        if frame["stream"] == "lifecycle" and frame["data"]["phase"] in ("end", "error"):
            return


def _again(first: web.Response) -> web.Response:
    """A repeat of a request already answered under the same idempotency key: the first run's outcome."""
    assert first.body is not None and not isinstance(first.body, str)
    headers = {name: value for name, value in first.headers.items() if name.lower().startswith("x-")}
    return web.Response(body=first.body, status=first.status, content_type="application/json", headers=headers)


def _envelope(completion_id: str, kind: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": completion_id, "object": kind, "created": int(time.time()), "model": MODEL, "choices": choices}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "server_error", "code": "run_failed"}}


def _usage(run: Run) -> dict[str, int]:
    """The tokens of every model call the run made."""
    total = run.prompt_tokens + run.completion_tokens
    return {"prompt_tokens": run.prompt_tokens, "completion_tokens": run.completion_tokens, "total_tokens": total}


def finish_reason(run: Run) -> str:
    """The model's reason for ending the run's last call; tools run inside relaybot, so a turn cut there is `length`."""
    reason = run.finish_reason or "stop"
    return "length" if reason == "tool_calls" else reason


async def _complete(run: Run, frames: AsyncIterator[Frame]) -> web.Response:
    async for _ in frames:
        pass
    if run.status == "error":
        return web.json_response(_error(run.reply or run.error or "the run failed"), status=502, headers=NO_RETRY)
    message = {"role": "assistant", "content": run.reply or ""}
    completion = _envelope(
        f"chatcmpl-{new_id()}",
        "chat.completion",
        [{"index": 0, "message": message, "finish_reason": finish_reason(run)}],
    )
    completion["usage"] = _usage(run)
    return web.json_response(completion)


async def _stream(
    request: web.Request, run: Run, frames: AsyncIterator[Frame], include_usage: bool
) -> web.StreamResponse:
    """SSE in the OpenAI chunk format; text that was not streamed (a notice, a reply after tools) comes at the end."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    try:
        await _stream_run(response, run, frames, include_usage)
    except ConnectionResetError:  # the client went away (it stopped reading): normal, and its run goes on
        logger.debug("completion stream of run %s: the client left", run.id)
    return response


async def _stream_run(
    response: web.StreamResponse, run: Run, frames: AsyncIterator[Frame], include_usage: bool
) -> None:
    completion_id = f"chatcmpl-{new_id()}"

    async def send(payload: dict[str, Any]) -> None:
        await response.write(f"data: {json.dumps(payload)}\n\n".encode())

    async def chunk(delta: dict[str, Any], reason: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        await send(_envelope(completion_id, "chat.completion.chunk", [choice]))

    await chunk({"role": "assistant", "content": ""})
    streamed = ""  # every delta of the run; the final reply is its last call's text
    async for frame in frames:
        data = frame["data"]
        if frame["stream"] == "assistant" and "delta" in data:
            streamed += data["delta"]
            await chunk({"content": data["delta"]})
        elif "text" in data and run.status == "ok" and not streamed.strip().endswith(data["text"].strip()):
            await chunk({"content": data["text"] if not streamed else f"\n\n{data['text']}"})
    if run.status == "error":
        await send(_error(run.reply or run.error or "the run failed"))
    await chunk({}, finish_reason(run))
    if include_usage:
        await send(_envelope(completion_id, "chat.completion.chunk", []) | {"usage": _usage(run)})
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
