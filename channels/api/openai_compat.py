"""OpenAI-compatible `POST /v1/chat/completions` (plain or SSE) and `GET /v1/models`, answered by the agent."""

from __future__ import annotations

import asyncio
import json
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from bot.bus import ChatRef, new_id
from channels.api.auth import Caller
from channels.api.frames import Frame
from channels.api.hub import ApiSessions, session_chat

MODEL = "relaybot"


def last_user_text(body: Any) -> str:
    """The text of the last user message of a chat completion request; raise HTTPBadRequest when there is none."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                parts = [p for p in content if isinstance(p, dict) and p.get("type") == "text"]
                content = "\n".join(str(p.get("text", "")) for p in parts)
            if isinstance(content, str) and content.strip():
                return content
    error = {"message": "messages needs a user message with text", "type": "invalid_request_error"}
    raise web.HTTPBadRequest(text=json.dumps({"error": error}), content_type="application/json")


def add_routes(app: web.Application, channel: ApiSessions) -> None:
    """Mount /v1/models and /v1/chat/completions."""
    locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

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
        text = last_user_text(body)
        chat = session_chat(caller, body.get("user") if isinstance(body.get("user"), str) else None)
        async with locks[chat.session_key]:  # one request per session at a time: every reply finds its request
            frames = _turn_frames(channel, caller, chat, text)
            if body.get("stream"):
                return await _stream(request, frames)
            return await _complete(frames)

    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", completions)


async def _turn_frames(channel: ApiSessions, caller: Caller, chat: ChatRef, text: str) -> AsyncIterator[Frame]:
    """The frames of one turn, up to and including its reply (or the end of a turn that sent none)."""
    key = chat.session_key
    queue = channel.hub.watch(key)
    try:
        client_id = await channel.submit(caller, chat, text, f"http-{new_id()}")
        while True:
            frame = await queue.get()
            yield frame
            if frame.get("reply_to") == client_id and (
                frame["type"] in ("message", "error") or (frame["type"] == "status" and frame.get("replied") is False)
            ):
                return
    finally:
        channel.hub.unwatch(key, queue)


def _envelope(completion_id: str, kind: str, choice: dict[str, Any]) -> dict[str, Any]:
    return {"id": completion_id, "object": kind, "created": int(time.time()), "model": MODEL, "choices": [choice]}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "server_error"}}


async def _complete(frames: AsyncIterator[Frame]) -> web.Response:
    reply = ""
    async for frame in frames:
        if frame["type"] == "error":
            return web.json_response(_error(frame["message"]), status=502)
        if frame["type"] == "message":
            reply = frame["text"]
    completion = _envelope(
        f"chatcmpl-{new_id()}",
        "chat.completion",
        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"},
    )
    completion["usage"] = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    return web.json_response(completion)


async def _stream(request: web.Request, frames: AsyncIterator[Frame]) -> web.StreamResponse:
    """SSE in the OpenAI chunk format; text that was not streamed (a notice, a reply after tools) comes at the end."""
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    completion_id = f"chatcmpl-{new_id()}"

    async def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> None:
        payload = _envelope(
            completion_id, "chat.completion.chunk", {"index": 0, "delta": delta, "finish_reason": finish_reason}
        )
        await response.write(f"data: {json.dumps(payload)}\n\n".encode())

    await chunk({"role": "assistant", "content": ""})
    streamed = ""  # the text of the latest model call, which the final reply repeats
    async for frame in frames:
        if frame["type"] == "stream_start":
            streamed = ""
        elif frame["type"] == "stream_chunk":
            streamed += frame["text"]
            await chunk({"content": frame["text"]})
        elif frame["type"] == "message" and frame["text"].strip() != streamed.strip():
            await chunk({"content": frame["text"] if not streamed else f"\n\n{frame['text']}"})
        elif frame["type"] == "error":
            await response.write(f"data: {json.dumps(_error(frame['message']))}\n\n".encode())
    await chunk({}, "stop")
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response
