"""WebSocket /ws: authenticated by Bearer header, session cookie or first frame; text and calls in, events out."""

from __future__ import annotations

import asyncio
import contextlib
import json

from aiohttp import WSCloseCode, WSMsgType, web

from channels.api.frames import Frame
from channels.api.hub import session_chat
from channels.api.rpc.methods import MAX_TEXT, RunChannel
from channels.api.rpc.ws_calls import WsCalls
from channels.api.web.auth import Caller
from channels.api.web.gate import Gatekeeper, bearer_token
from channels.api.web.sessions import COOKIE

AUTH_WAIT = 10.0


def add_routes(app: web.Application, channel: RunChannel) -> None:
    """Mount /ws."""

    async def handle(request: web.Request) -> web.WebSocketResponse:
        gate = channel.gate
        gate.origins.check(request)
        caller: Caller | None = None
        if bearer_token(request) is not None or COOKIE in request.cookies:
            caller = gate.check(request)
        else:  # the token will come in the first frame; a locked-out address need not send it
            gate.refuse_locked(request)
        socket = web.WebSocketResponse(heartbeat=30)
        await socket.prepare(request)
        caller = caller or await _first_frame_caller(gate, request, socket)
        if caller is not None:
            await _Connection(channel, caller, socket, request.query.get("session")).serve()
        return socket

    app.router.add_get("/ws", handle)


async def _first_frame_caller(gate: Gatekeeper, request: web.Request, socket: web.WebSocketResponse) -> Caller | None:
    """Authenticate by the first frame, `{"type": "auth", "token": …}`; refuse and close on anything else."""
    reason = 'the first frame must be {"type": "auth", "token": "…"}'
    try:
        async with asyncio.timeout(AUTH_WAIT):
            raw = await socket.receive()
        frame = json.loads(raw.data) if raw.type is WSMsgType.TEXT else None
        if isinstance(frame, dict) and frame.get("type") == "auth" and isinstance(frame.get("token"), str):
            return gate.caller_for(request, frame["token"])
    except (TimeoutError, ValueError):
        pass
    except web.HTTPException as refused:
        reason = refused.text or "refused"
    if not socket.closed:
        await socket.send_json({"type": "error", "message": reason})
        await socket.close(code=WSCloseCode.POLICY_VIOLATION, message=b"not authenticated")
    return None


class _Connection:
    """One client: follows one session at a time and forwards its frames, and the runs it started or watches."""

    def __init__(self, channel: RunChannel, caller: Caller, socket: web.WebSocketResponse, session: str | None) -> None:
        self._channel = channel
        self._caller = caller
        self._socket = socket
        self._chat = session_chat(caller, session)
        self._queue = channel.hub.watch(self._chat.session_key)

    async def serve(self) -> None:
        """Read client frames until it disconnects, forwarding session frames meanwhile."""
        self._writer = self._start_writer()
        calls = WsCalls(self._channel, self._caller, self._socket)
        try:
            await self._send_status()
            async for raw in self._socket:
                if raw.type is not WSMsgType.TEXT:
                    break
                await self._handle(raw.data, calls)
        finally:
            await calls.close()
            await self._stop_writer()
            self._channel.hub.unwatch(self._chat.session_key, self._queue)

    def _start_writer(self) -> asyncio.Task[None]:
        return asyncio.create_task(self._forward(self._queue), name=f"ws:{self._chat.session_key}")

    async def _stop_writer(self) -> None:
        self._writer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._writer

    async def _forward(self, queue: asyncio.Queue[Frame]) -> None:
        while True:
            frame = await queue.get()
            await self._socket.send_json(frame)

    async def _send_status(self) -> None:
        key = self._chat.session_key
        history = self._channel.history(key)
        await self._socket.send_json(
            {"type": "status", "state": "connected", "session": self._chat.thread_id, "history": history}
        )

    async def _handle(self, data: str, calls: WsCalls) -> None:
        try:
            frame: Frame = json.loads(data)
            kind = frame["type"]
        except (ValueError, KeyError, TypeError):
            await self._socket.send_json({"type": "error", "message": "frames are JSON objects with a type"})
            return
        if kind == "req":
            calls.call(frame)
        elif kind == "message":
            await self._message(frame)
        elif kind == "stop":
            await self._channel.submit(self._caller, self._chat, "/stop")
        elif kind == "new":
            await self._channel.submit(self._caller, self._chat, "/new")
        else:
            await self._socket.send_json({"type": "error", "message": f"unknown frame type {kind!r}"})

    async def _message(self, frame: Frame) -> None:
        text = frame.get("text")
        if not isinstance(text, str) or not text.strip():
            await self._socket.send_json({"type": "error", "message": "a message needs text"})
            return
        if len(text) > MAX_TEXT:
            await self._socket.send_json({"type": "error", "message": f"a message is at most {MAX_TEXT} characters"})
            return
        session = frame.get("session")
        if isinstance(session, str) and session.strip() and session.strip() != self._chat.thread_id:
            await self._switch(session)
            await self._send_status()
        client_id = frame.get("id")
        await self._channel.submit(self._caller, self._chat, text, str(client_id) if client_id else None)

    async def _switch(self, session: str) -> None:
        """Follow another session of the same token; frames already queued are still delivered."""
        await self._stop_writer()
        self._channel.hub.unwatch(self._chat.session_key, self._queue)
        while not self._queue.empty():
            await self._socket.send_json(self._queue.get_nowait())
        self._chat = session_chat(self._caller, session)
        self._queue = self._channel.hub.watch(self._chat.session_key)
        self._writer = self._start_writer()
