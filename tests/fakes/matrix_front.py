"""A loopback front for a real Synapse: it relays the bot's client-server calls whole, records what the bot did
(messages, edits, reactions, uploads, declined invites) and, when told, answers one send itself (429, 503, 403)
or hands one sync an event again, as a homeserver may after a reconnect."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from aiohttp import ClientSession, ClientTimeout, web

from tests.fakes.loopback import LoopbackSite
from tests.fakes.waiting import RecordWaiter

_HOP_BY_HOP = frozenset({"host", "connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"})
_SEND = re.compile(r"/_matrix/client/v3/rooms/([^/]+)/send/([^/]+)/([^/]+)$")
_REDACT = re.compile(r"/_matrix/client/v3/rooms/([^/]+)/redact/([^/]+)/([^/]+)$")
_LEAVE = re.compile(r"/_matrix/client/v3/rooms/([^/]+)/leave$")


@dataclass
class Posted:
    """One message the bot created: its room, event id, content (a declined invite's reason counts as one)."""

    room_id: str
    event_id: str
    content: dict[str, Any]


class MatrixFront:
    """`async with MatrixFront(synapse_url) as front`: the bot's homeserver is `front.url`."""

    def __init__(self, upstream: str) -> None:
        self._upstream = upstream
        self.url = ""
        self.calls: list[tuple[str, str]] = []
        self.posted: list[Posted] = []
        self.edits: list[tuple[str, str]] = []  # (edited event id, new body)
        self.reactions: dict[str, tuple[str, str]] = {}  # reaction event id -> (target event id, key)
        self.uploads: list[str] = []
        self.seen_events: dict[str, tuple[str, dict[str, Any]]] = {}  # event id -> (room, event) synced to the bot
        self._failures: list[tuple[int, dict[str, Any]]] = []
        self._sync_failures: list[tuple[int, dict[str, Any]]] = []
        self._again: list[str] = []
        self._lose_answers = 0
        self._waiter = RecordWaiter()
        self._site: LoopbackSite | None = None
        self._client: ClientSession | None = None

    async def __aenter__(self) -> MatrixFront:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._relay)
        self._site = LoopbackSite(app)
        self.url = f"http://127.0.0.1:{await self._site.start()}"
        self._client = ClientSession(timeout=ClientTimeout(total=None), auto_decompress=True)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._client is not None:
            await self._client.close()  # first: a relayed long-poll /sync ends now, not when Synapse answers it
        if self._site is not None:
            await self._site.stop()

    def fail_send(self, status: int, errcode: str, error: str, retry_after_ms: int | None = None) -> None:
        """Answer the bot's next `m.room.message` send with this error instead of relaying it."""
        self._failures.append(_error(status, errcode, error, retry_after_ms))

    def fail_sync(self, status: int, errcode: str, error: str, retry_after_ms: int | None = None) -> None:
        """Answer the bot's next /sync with this error (a homeserver down or limiting) instead of relaying it."""
        self._sync_failures.append(_error(status, errcode, error, retry_after_ms))

    def lose_send_answer(self) -> None:
        """Relay the bot's next `m.room.message` send, then drop the connection instead of answering it."""
        self._lose_answers += 1

    def deliver_again(self, event_id: str) -> None:
        """Put the (already synced) event into the bot's next sync once more."""
        self._again.append(event_id)

    def send_attempts(self) -> int:
        """How many `m.room.message` sends the bot made, answered or not."""
        return sum(1 for method, path in self.calls if method == "PUT" and "/send/m.room.message/" in path)

    async def wait_until(self, ready: Any, what: str, timeout: float = 20) -> None:
        """Return once `ready()` holds, re-checked at every recorded call."""
        await self._waiter.wait_until(ready, timeout, lambda: f"not yet {what}")

    async def _relay(self, request: web.Request) -> web.StreamResponse:
        assert self._client is not None
        path = request.path
        self.calls.append((request.method, path))
        body = await request.read()
        send = _SEND.search(path) if request.method == "PUT" else None
        if send and send.group(2) == "m.room.message" and self._failures:
            status, error = self._failures.pop(0)
            await self._waiter.notify()
            return web.json_response(error, status=status)
        if path.endswith("/sync") and self._sync_failures:
            status, error = self._sync_failures.pop(0)
            await self._waiter.notify()
            return web.json_response(error, status=status)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        target = self._upstream + str(request.rel_url)
        async with self._client.request(request.method, target, data=body, headers=headers) as reply:
            answer = await reply.read()
            kept = {k: v for k, v in reply.headers.items() if k.lower() not in _HOP_BY_HOP}
            status = reply.status
        if status == 200:
            answer = self._record(request, path, body, answer)
        await self._waiter.notify()
        if send and send.group(2) == "m.room.message" and self._lose_answers:
            self._lose_answers -= 1
            assert request.transport is not None
            request.transport.close()  # the homeserver has the message; the bot never hears so
        return web.Response(body=answer, status=status, headers=kept)

    def _record(self, request: web.Request, path: str, body: bytes, answer: bytes) -> bytes:
        """Note what a successful call did; a sync answer may get an event again."""
        if path.endswith("/sync"):
            return self._synced(json.loads(answer))
        if path.endswith("/upload") and "/media/" in path:  # not /keys/upload
            self.uploads.append(request.query.get("filename", ""))
        elif (send := _SEND.search(path)) and request.method == "PUT":
            room, kind = unquote(send.group(1)), send.group(2)
            content, event_id = json.loads(body), json.loads(answer)["event_id"]
            relation = content.get("m.relates_to") or {}
            if kind == "m.reaction":
                self.reactions[event_id] = (relation.get("event_id", ""), relation.get("key", ""))
            elif relation.get("rel_type") == "m.replace":
                self.edits.append((relation["event_id"], content["m.new_content"]["body"]))
            else:
                self.posted.append(Posted(room, event_id, content))
        elif (redact := _REDACT.search(path)) and request.method == "PUT":
            self.reactions.pop(unquote(redact.group(2)), None)
        elif (leave := _LEAVE.search(path)) and body:
            reason = json.loads(body).get("reason")
            if reason:
                self.posted.append(Posted(unquote(leave.group(1)), "", {"body": reason, "declined": True}))
        return answer

    def _synced(self, data: dict[str, Any]) -> bytes:
        for room_id, room in ((data.get("rooms") or {}).get("join") or {}).items():
            for event in (room.get("timeline") or {}).get("events") or []:
                if "event_id" in event:
                    self.seen_events[event["event_id"]] = (room_id, event)
        while self._again:
            room_id, event = self.seen_events[self._again.pop(0)]
            joined = data.setdefault("rooms", {}).setdefault("join", {})
            room = joined.setdefault(room_id, {"timeline": {"events": [], "limited": False}})
            room.setdefault("timeline", {"events": [], "limited": False})["events"].append(event)
        return json.dumps(data).encode()


def _error(status: int, errcode: str, error: str, retry_after_ms: int | None) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"errcode": errcode, "error": error}
    if retry_after_ms is not None:
        body["retry_after_ms"] = retry_after_ms
    return status, body
