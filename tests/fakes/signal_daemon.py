"""A fake signal-cli daemon (`signal-cli -a ACCOUNT daemon --http`, aiohttp on 127.0.0.1) for one account.

The wire format, from signal-cli's man page signal-cli-jsonrpc(5) and its source (`http/HttpServerHandler`,
`http/ServerSentEventSender`, `jsonrpc/SignalJsonRpcCommandHandler`, `json/Json*`, `util/SendMessageResultUtils`):

- `POST /api/v1/rpc` takes one JSON-RPC 2.0 request (`Content-Type: application/json`, else 415):
  `{"jsonrpc": "2.0", "method", "params", "id"}` → 200 `{"jsonrpc": "2.0", "result", "id"}` or `{"jsonrpc": "2.0",
  "error": {"code", "message", "data"}, "id"}`. Methods are the CLI commands, parameters in camelCase; in
  multi-account mode each carries `account` (an unknown one: -32602 "Specified account does not exist").
- Error codes: -1 user error, -3 I/O error, -4 untrusted key, -5 rate limit, -32601 unknown method, -32602 bad
  params, -32603 internal. A failed send's `data` is `{"response": {"timestamp", "results": [...]}}`, each result
  `{"recipientAddress": {"uuid", "number"}, "type": "SUCCESS" | "NETWORK_FAILURE" | "UNREGISTERED_FAILURE" |
  "IDENTITY_FAILURE" | "RATE_LIMIT_FAILURE" | …, "retryAfterSeconds"?}`; only rate-limit failures make it -5 ("Failed
  to send message due to rate limiting"), any other mix -1 ("Failed to send message").
- `send` `{"recipient": [number|uuid] | "groupId", "message", "attachments": [path | "data:<mime>;filename=<name>;
  base64,<data>"], "quoteTimestamp", "quoteAuthor", "quoteMessage"}` → `{"timestamp", "results"}`;
  `sendReaction` `{recipient|groupId, "emoji", "targetAuthor", "targetTimestamp", "remove"?}`; `sendReceipt`
  `{"recipient" (the sender), "targetTimestamp": [...], "type": "read"|"viewed"}`; `sendTyping`
  `{recipient|groupId, "stop"?}`; `getAttachment` `{"id", recipient|groupId}` → `{"data": <base64>}`;
  `listGroups` → `[{"id", "name", "isMember", "members", …}]`; `getUserStatus` `{"recipient": [...]}` →
  `[{"recipient", "number", "uuid", "isRegistered"}]`.
- `GET /api/v1/events` is a server-sent event stream (`text/event-stream`): each message is `event:receive` and one
  `data:` line `{"envelope": {...}, "account"}`, a blank line after; `:` alone every 15 s keeps it alive.
  `?account=` picks one account in multi-account mode. `GET /api/v1/check` → 200 while the daemon runs.
- An envelope: `{"source", "sourceNumber", "sourceUuid", "sourceName", "sourceDevice", "timestamp",
  "serverReceivedTimestamp", "serverDeliveredTimestamp", "dataMessage": {"timestamp", "message", "expiresInSeconds",
  "viewOnce", "mentions": [{"name", "number", "uuid", "start", "length"}] (the text holds U+FFFC where each is),
  "attachments": [{"contentType", "filename", "id", "size"}], "quote": {"id" (the quoted timestamp), "author",
  "authorNumber", "authorUuid", "text", "attachments"}, "groupInfo": {"groupId", "groupName", "revision", "type"}}}`;
  `typingMessage`, `receiptMessage`, `syncMessage` envelopes carry no `dataMessage`.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
import uuid
from collections import deque
from collections.abc import Callable
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackSite
from tests.fakes.waiting import RecordWaiter

MENTION = "\ufffc"


def rpc_error(
    code: int, message: str, results: list[str] | None = None, retry_after: int | None = None
) -> dict[str, Any]:
    """A JSON-RPC error as signal-cli words it; `results` gives the per-recipient send outcomes in its data."""
    data = None
    if results is not None:
        outcomes = []
        for kind in results:
            outcome: dict[str, Any] = {"recipientAddress": {"uuid": str(uuid.uuid4()), "number": None}, "type": kind}
            if retry_after is not None:
                outcome["retryAfterSeconds"] = retry_after
            outcomes.append(outcome)
        data = {"response": {"timestamp": int(time.time() * 1000), "results": outcomes}}
    return {"code": code, "message": message, "data": data}


class FakeSignalDaemon:
    """One account with one group; people write with `dm`/`group_message`/`dm_file`; `sent` holds the bot's sends."""

    def __init__(
        self, account: str = "+4915100000099", group_id: str = "R3JvdXBJZEZvclRlc3RzMDEyMzQ1Njc4OUFCQ0Q="
    ) -> None:
        self.account, self.group_id, self.group_name = account, group_id, "Team"
        self.bot_uuid = str(uuid.uuid4())
        self.names: dict[str, str] = {}  # number -> profile name
        self.uuids: dict[str, str] = {}  # number -> uuid
        self.sent: list[dict[str, Any]] = []  # params of each accepted `send`, with its "timestamp"
        self.reactions: list[dict[str, Any]] = []
        self.typing: list[dict[str, Any]] = []
        self.receipts: list[dict[str, Any]] = []
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.attachments: dict[str, tuple[bytes, str, str]] = {}  # id -> bytes, content type, filename
        self.failures: deque[dict[str, Any]] = deque()  # JSON-RPC errors for the next `send` calls
        self.attempts = 0
        self.streams = 0
        self.port = 0
        self._clock = itertools.count(int(time.time() * 1000))
        self._events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiter = RecordWaiter()
        self._site: LoopbackSite | None = None
        self._streaming: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        """The daemon's address, as `channels.signal.url`."""
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeSignalDaemon:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def start(self, port: int = 0) -> None:
        """Serve on `port` (0: a free one); after `stop`, `start(fake.port)` brings the daemon back where it was."""
        app = web.Application()
        app.router.add_post("/api/v1/rpc", self._rpc)
        app.router.add_get("/api/v1/events", self._stream)
        app.router.add_get("/api/v1/check", self._check)
        self._site = LoopbackSite(app)
        self.port = await self._site.start(port)

    async def stop(self) -> None:
        """The daemon goes away (its event streams end)."""
        for task in list(self._streaming):
            task.cancel()
        if self._site is not None:
            await self._site.stop()
            self._site = None

    # What people do.

    def envelope(self, sender: str, text: str, group: bool = False, **data: Any) -> dict[str, Any]:
        """A `receive` event of a data message from `sender` (a number), in the group when `group`."""
        stamp = next(self._clock)
        message: dict[str, Any] = {"timestamp": stamp, "message": text, "expiresInSeconds": 0, "viewOnce": False}
        if group:
            message["groupInfo"] = {
                "groupId": self.group_id,
                "groupName": self.group_name,
                "revision": 3,
                "type": "DELIVER",
            }
        message.update(data)
        envelope = {
            "source": sender,
            "sourceNumber": sender,
            "sourceUuid": self.uuids.setdefault(sender, str(uuid.uuid4())),
            "sourceName": self.names.get(sender, f"Person {sender[-2:]}"),
            "sourceDevice": 1,
            "timestamp": stamp,
            "serverReceivedTimestamp": stamp,
            "serverDeliveredTimestamp": stamp,
            "dataMessage": message,
        }
        return {"envelope": envelope, "account": self.account}

    def dm(self, text: str, sender: str, **data: Any) -> dict[str, Any]:
        """`sender` writes to the bot directly; returns the event queued."""
        return self.push(self.envelope(sender, text, **data))

    def group_message(self, text: str, sender: str, mention: bool, **data: Any) -> dict[str, Any]:
        """`sender` writes in the group, mentioning the bot (a U+FFFC and a mention entry) first when `mention`."""
        if mention:
            entry = {"name": self.account, "number": self.account, "uuid": self.bot_uuid, "start": 0, "length": 1}
            text, data = f"{MENTION} {text}", {**data, "mentions": [entry]}
        return self.push(self.envelope(sender, text, group=True, **data))

    def dm_file(self, content: bytes, name: str, mime_type: str, sender: str, text: str = "") -> dict[str, Any]:
        """`sender` sends the bot a file; signal-cli has already stored it under its attachment id."""
        attachment_id = f"{uuid.uuid4().hex[:20]}{'.' + name.rpartition('.')[2] if '.' in name else ''}"
        self.attachments[attachment_id] = (content, mime_type, name)
        entry = {"contentType": mime_type, "filename": name, "id": attachment_id, "size": len(content)}
        return self.dm(text, sender, attachments=[entry])

    def push(self, event: dict[str, Any]) -> dict[str, Any]:
        """Queue an event for the bot's event stream (held while none is open)."""
        self._events.put_nowait(event)
        return event

    # What tests read.

    def sent_texts(self) -> list[str]:
        return [str(sent.get("message") or "") for sent in self.sent]

    async def wait_for_sent(self, n: int, timeout: float = 10) -> None:
        await self.wait_until(lambda: len(self.sent) >= n, f"{n} sends", timeout)

    async def wait_until(self, ready: Callable[[], bool], what: str, timeout: float = 10) -> None:
        await self._waiter.wait_until(ready, timeout, lambda: f"{len(self.sent)} sends, waiting for {what}")

    # The daemon.

    async def _check(self, request: web.Request) -> web.Response:
        return web.Response(status=200)

    async def _rpc(self, request: web.Request) -> web.Response:
        if not request.content_type.startswith("application/json"):
            return web.Response(status=415)
        body = await request.json()
        params = dict(body.get("params") or {})
        self.calls.append((body.get("method"), params))
        try:
            if params.pop("account", self.account) != self.account:
                raise _Refused(-32602, "Specified account does not exist")
            result = await self._dispatch(body.get("method"), params)
        except _Refused as refused:
            answer = {"jsonrpc": "2.0", "error": refused.error, "id": body.get("id")}
        else:
            answer = {"jsonrpc": "2.0", "result": result, "id": body.get("id")}
        await self._waiter.notify()
        return web.json_response(answer)

    async def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        if method == "send":
            return self._send(params)
        if method == "sendReaction":
            self.reactions.append(params)
            return self._delivered(next(self._clock))
        if method == "sendReceipt":
            self.receipts.append(params)
            return {}
        if method == "sendTyping":
            self.typing.append(params)
            return {}
        if method == "getAttachment":
            if params.get("id") not in self.attachments:
                raise _Refused(-1, f"Could not find attachment with ID: {params.get('id')}")
            return {"data": base64.b64encode(self.attachments[params["id"]][0]).decode()}
        if method == "listGroups":
            return [{"id": self.group_id, "name": self.group_name, "isMember": True, "isBlocked": False}]
        if method == "getUserStatus":
            recipients = params.get("recipient") or []
            recipients = [recipients] if isinstance(recipients, str) else recipients
            own = {self.account: self.bot_uuid}
            return [
                {"recipient": r, "number": r, "uuid": own.get(r) or self.uuids.get(r), "isRegistered": True}
                for r in recipients
            ]
        raise _Refused(-32601, "Method not implemented")

    def _send(self, params: dict[str, Any]) -> dict[str, Any]:
        self.attempts += 1
        if self.failures:
            raise _Refused(**self.failures.popleft())
        if not params.get("recipient") and not params.get("groupId"):
            raise _Refused(-1, "No recipients given")
        stamp = next(self._clock)
        for attachment in params.get("attachments") or []:
            header, _, data = str(attachment).partition(",")
            name = next((p[9:] for p in header.split(";") if p.startswith("filename=")), "attachment")
            self.attachments[f"out-{stamp}-{name}"] = (base64.b64decode(data), header[5:].split(";")[0], name)
        self.sent.append({**params, "timestamp": stamp})
        return self._delivered(stamp)

    @staticmethod
    def _delivered(stamp: int) -> dict[str, Any]:
        return {
            "timestamp": stamp,
            "results": [{"recipientAddress": {"uuid": None, "number": None}, "type": "SUCCESS"}],
        }

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        account = request.query.get("account")
        if account and account != self.account:
            return web.Response(status=400)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.streams += 1
        await self._waiter.notify()
        task = asyncio.current_task()
        assert task is not None
        self._streaming.add(task)
        try:
            await self._forward(response)
        finally:
            self._streaming.discard(task)
        return response

    async def _forward(self, response: web.StreamResponse) -> None:
        while True:
            try:
                event = await asyncio.wait_for(self._events.get(), 15)
            except TimeoutError:
                await response.write(b":\n")
                continue
            try:
                await response.write(f"event:receive\ndata:{json.dumps(event)}\n\n".encode())
            except ConnectionError:
                self._events.put_nowait(event)
                return


class _Refused(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.error = {"code": code, "message": message, "data": data}
