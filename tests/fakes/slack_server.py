"""A fake Slack (Web API + Socket Mode websocket, aiohttp on 127.0.0.1) that the real slack-bolt talks to."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.slack_payloads import block_actions, message_changed, slash_command
from tests.fakes.waiting import RecordWaiter

TEXT_LIMIT = 40_000
_UNAVAILABLE = "<html><body><h1>503 Service Unavailable</h1></body></html>"


@dataclass
class Failure:
    """An injected answer for the next call of a method: a Slack error, a 429, a bare 5xx page, or (0) a reset."""

    status: int
    error: str
    retry_after: int | None = None

    def response(self) -> web.Response:
        """What real Slack answers for this failure."""
        if self.status >= 500:
            return web.Response(status=self.status, text=_UNAVAILABLE, content_type="text/html")
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else None
        return web.json_response({"ok": False, "error": self.error}, status=self.status, headers=headers)


@dataclass
class Envelope:
    """One envelope (events_api, interactive or slash_commands); `acked` flips when the client answers."""

    body: dict
    retry_attempt: int = 0
    envelope_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    kind: str = "events_api"
    sent: bool = False
    acked: bool = False
    sent_at: float = 0.0
    ack_delay: float | None = None  # seconds from sending the envelope to its ack
    ack_payload: dict | None = None

    def frame(self) -> str:
        """The websocket frame Slack sends for this envelope."""
        frame = {
            "envelope_id": self.envelope_id,
            "type": self.kind,
            "payload": self.body,
            "accepts_response_payload": self.kind != "events_api",
        }
        if self.kind == "events_api":
            frame.update(retry_attempt=self.retry_attempt, retry_reason="timeout" if self.retry_attempt else "")
        return json.dumps(frame)


class FakeSlack:
    """Slack for one workspace: push events with `dm`/`channel_message`/`file_share`, read `posted` and `acks`."""

    def __init__(
        self,
        bot_token: str = "xoxb-test-token",
        app_token: str = "xapp-test-token",
        bot_user_id: str = "UBOT",
        bot_id: str = "BBOT",
        team_id: str = "T0001",
    ) -> None:
        self.bot_token, self.app_token = bot_token, app_token
        self.bot_user_id, self.bot_id, self.team_id = bot_user_id, bot_id, team_id
        self.calls: list[tuple[str, dict]] = []
        self.posted: list[dict] = []
        self.updates: list[dict] = []
        self.streams: dict[str, dict] = {}  # ts -> {"channel", "thread_ts", "text", "state", "appends"}
        self.uploads: list[dict] = []
        self.shares = 0
        self._upload_slots: dict[str, dict] = {}
        self.acks: list[str] = []
        self.ephemeral: list[dict] = []
        self.reactions: dict[tuple[str, str], list[str]] = {}  # (channel, ts) -> reaction names, in order added
        self.statuses: list[dict] = []
        self.scopes: set[str] | None = None  # None: every scope; else methods needing a missing one are refused
        self.connections = 0
        self.users: dict[str, str] = {}
        self.down = False
        self._envelopes: list[Envelope] = []
        self._files: dict[str, tuple[str, bytes]] = {}
        self._failures: dict[str, deque[Failure]] = {}
        self._socket: web.WebSocketResponse | None = None
        self._request: web.Request | None = None
        self._sockets: set[web.WebSocketResponse] = set()
        self._flushing = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._event_ids = itertools.count(1)
        self._ts = itertools.count(1)
        self._recorded = RecordWaiter()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._methods: dict[str, Callable[[dict], dict]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "users.info": self._users_info,
            "chat.update": self._update,
            "chat.delete": self._delete,
            "chat.startStream": self._start_stream,
            "chat.appendStream": self._append_stream,
            "chat.stopStream": self._stop_stream,
            "files.getUploadURLExternal": self._upload_url,
            "files.completeUploadExternal": self._complete_upload,
            "conversations.history": self._conversations_history,
            "conversations.replies": self._conversations_replies,
            "chat.postEphemeral": self._post_ephemeral,
            "reactions.add": self._reaction_add,
            "reactions.remove": self._reaction_remove,
            "assistant.threads.setStatus": self._set_status,
        }
        self._history: dict[str, list[dict]] = {}  # channel -> its messages as history returns them, oldest first
        self._bot_messages: dict[tuple[str, str], dict] = {}

    @property
    def base_url(self) -> str:
        """Pass to `AsyncWebClient(base_url=…)`; methods arrive as `POST` (some `GET`) `/api/<method>`."""
        return f"http://127.0.0.1:{self._port}/api/"

    @property
    def connected(self) -> bool:
        """Whether a Socket Mode client is connected now."""
        return self._socket is not None and not self._socket.closed

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 (port 0 picks a free one)."""
        app = web.Application()
        app.router.add_route("*", "/api/{method}", self._api)
        app.router.add_get("/socket", self._websocket)
        app.router.add_get("/files/{file_id}/{name}", self._download)
        app.router.add_post("/upload/{file_id}", self._receive_upload)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.5)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Close every socket and stop serving."""
        for task in self._tasks:
            task.cancel()
        for socket in list(self._sockets):
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # inbound: what users do

    def dm(self, text: str, user: str = "U0001", channel: str = "D0001", **extra: Any) -> dict:
        """A direct message to the bot (message.im); returns the event."""
        return self.send_event(self._message(text, user, channel, "im", **extra))

    def message_while_offline(self, text: str, user: str = "U0001", channel: str = "D0001", **extra: Any) -> dict:
        """A message (a DM, or a thread reply with `thread_ts`) sent while the bot is away: in history, no event."""
        return self._message(text, user, channel, "im" if channel.startswith("D") else "channel", **extra)

    def channel_message(
        self,
        text: str,
        channel: str = "C0001",
        user: str = "U0001",
        mention: bool = False,
        thread_ts: str | None = None,
        channel_type: str = "channel",
        **extra: Any,
    ) -> dict:
        """A channel message; a mention prefixes `<@bot>` and, like Slack, also sends an app_mention (same ts)."""
        if mention:
            text = f"<@{self.bot_user_id}> {text}"
        if thread_ts is not None:
            extra["thread_ts"] = thread_ts
        event = self._message(text, user, channel, channel_type, **extra)
        if mention:
            mention_event = {k: v for k, v in event.items() if k not in ("channel_type", "subtype")}
            self.send_event({**mention_event, "type": "app_mention"})
        return self.send_event(event)

    def file_share(
        self, content: bytes, name: str, mimetype: str, text: str = "", user: str = "U0001", channel: str = "D0001"
    ) -> dict:
        """A message carrying an uploaded file (subtype file_share) whose url_private the bot may download."""
        file = self.add_file(content, name, mimetype)
        channel_type = "im" if channel.startswith("D") else "channel"
        return self.send_event(self._message(text, user, channel, channel_type, subtype="file_share", files=[file]))

    def add_file(self, content: bytes, name: str, mimetype: str) -> dict:
        """Store a file and return its Slack file object (url_private needs the bot token)."""
        file_id = f"F{len(self._files) + 1:04d}"
        self._files[file_id] = (mimetype, content)
        url = f"http://127.0.0.1:{self._port}/files/{file_id}/{name}"
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rpartition(".")[2],
            "size": len(content),
            "url_private": url,
            "url_private_download": f"{url}?download=1",
        }

    def edit(self, event: dict, text: str) -> dict:
        """The user edits the message `event` to `text`: Slack's message_changed event; returns it."""
        change = message_changed(event, text, self._next_ts())
        for stored in self._history.get(event["channel"], []):
            if stored["ts"] == event["ts"]:
                stored.update(text=text, edited=change["message"]["edited"])
        return self.send_event(change)

    def press(
        self, posted: dict, label: str, user: str = "U0001", name: str = "olive", *, as_posted: bool = False
    ) -> dict:
        """A user presses the button labelled `label` under the bot's message `posted`; returns the payload.

        `as_posted`: on the message as first posted, as a client that has not yet seen its later edit shows it."""
        channel = posted["channel"]
        message = dict(self._bot_messages[(channel, posted["ts"])])
        if as_posted:
            message["blocks"] = _json(posted.get("blocks") or [])
        trigger = f"{next(self._event_ids)}.trigger"
        who = {"id": user, "username": name, "name": name}
        payload = block_actions(message, channel, label, who, self.team_id, self._next_ts(), trigger)
        self._queue(Envelope(payload, kind="interactive"))
        return payload

    def slash_command(self, command: str, text: str = "", user: str = "U0001", channel: str = "D0001") -> dict:
        """A user runs `command` (e.g. "/new"); Slack sends its fields as the envelope's payload."""
        trigger = f"{next(self._event_ids)}.trigger"
        payload = slash_command(command, text, user, channel, self.team_id, trigger)
        self._queue(Envelope(payload, kind="slash_commands"))
        return payload

    def envelopes_of(self, kind: str) -> list[Envelope]:
        """The envelopes of one type (events_api, interactive, slash_commands) queued so far."""
        return [e for e in self._envelopes if e.kind == kind]

    def send_event(self, event: dict) -> dict:
        """Wrap `event` in an event_callback body and envelope; sent now, or on the next connection."""
        body = {
            "token": "verification-token",
            "team_id": self.team_id,
            "api_app_id": "A0001",
            "event": event,
            "type": "event_callback",
            "event_id": f"Ev{next(self._event_ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": self.team_id, "user_id": self.bot_user_id, "is_bot": True}],
        }
        self._queue(Envelope(body))
        return event

    def redeliver(self, event: dict) -> None:
        """Slack's retry of an event already delivered: same event_id, retry_attempt 1, a new envelope."""
        body = next(e.body for e in reversed(self._envelopes) if e.body["event"] is event)
        self._queue(Envelope(body, retry_attempt=1))

    async def retry_unacked(self) -> int:
        """Resend every sent but unacknowledged envelope as a retry; return how many."""
        unacked = [e for e in self._envelopes if e.sent and not e.acked]
        for envelope in unacked:
            envelope.acked = True  # superseded by its retry
            self._queue(Envelope(envelope.body, retry_attempt=envelope.retry_attempt + 1))
        return len(unacked)

    async def refresh(self) -> None:
        """Ask the client to reconnect, as Slack does every few hours; later events wait for the new connection."""
        assert self._socket is not None, "no Socket Mode client connected"
        socket, self._socket = self._socket, None
        frame = {"type": "disconnect", "reason": "refresh_requested", "debug_info": {"host": "fake-applink"}}
        await socket.send_str(json.dumps(frame))

    async def drop(self, abrupt: bool = False) -> None:
        """Close the current socket unasked: with a close frame, or `abrupt`ly by cutting the TCP connection."""
        assert self._socket is not None and self._request is not None, "no Socket Mode client connected"
        socket, self._socket = self._socket, None
        if abrupt and self._request.transport is not None:
            self._request.transport.abort()
        else:
            await socket.close()

    def fail(
        self, method: str, status: int = 429, error: str = "ratelimited", retry_after: int | None = 1, times: int = 1
    ) -> None:
        """Make the next `times` calls of `method` fail: 429 with Retry-After, another status, a 5xx page, 0 a reset."""
        failure = Failure(status, error, retry_after if status == 429 else None)
        self._failures.setdefault(method, deque()).extend(failure for _ in range(times))

    # outbound: what the bot did

    async def wait_for_posted(self, n: int, timeout: float = 10) -> list[dict]:
        """The first `n` posted messages, once that many exist."""
        await self.wait_until(lambda: len(self.posted) >= n, timeout, lambda: f"{len(self.posted)} of {n} posted")
        return self.posted[:n]

    async def wait_for_acks(self, n: int, timeout: float = 10) -> None:
        """Return once `n` envelopes have been acknowledged."""
        await self.wait_until(lambda: len(self.acks) >= n, timeout, lambda: f"{len(self.acks)} of {n} acks")

    async def wait_for_connections(self, n: int, timeout: float = 10) -> None:
        """Return once `n` Socket Mode connections have been opened in all and one is open now."""
        await self.wait_until(
            lambda: self.connections >= n and self.connected, timeout, lambda: f"{self.connections} of {n} connections"
        )

    async def wait_for_call(self, method: str, n: int = 1, timeout: float = 10) -> None:
        """Return once `method` has been called `n` times."""

        def count() -> int:
            return sum(1 for name, _ in self.calls if name == method)

        await self.wait_until(lambda: count() >= n, timeout, lambda: f"{count()} of {n} {method} calls")

    async def wait_until(self, ready: Callable[[], bool], timeout: float, progress: Callable[[], str]) -> None:
        """Wait until `ready()` holds, woken by every change the fake records."""
        await self._recorded.wait_until(ready, timeout, progress)

    # the wire

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        fields = await _fields(request)
        self.calls.append((method, fields))
        await self._notify()
        if self.down:
            return Failure(503, "").response()
        if failures := self._failures.get(method):
            failure = failures.popleft()
            if failure.status == 0 and request.transport is not None:
                request.transport.abort()  # the connection resets before any answer
            return failure.response()
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or fields.get("token", "")
        if error := self._auth_error(method, token):
            return web.json_response({"ok": False, "error": error})
        if method == "apps.connections.open":
            return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self._port}/socket?ticket={uuid.uuid4()}"})
        handler = self._methods.get(method)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"}, status=404)
        answer = handler(fields)
        await self._notify()
        return web.json_response(answer)

    def _auth_error(self, method: str, token: str) -> str | None:
        if not token:
            return "not_authed"
        expected = self.app_token if method == "apps.connections.open" else self.bot_token
        if token == expected:
            return None
        return "not_allowed_token_type" if token in (self.app_token, self.bot_token) else "invalid_auth"

    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(autoping=True)
        await socket.prepare(request)
        self._socket, self._request = socket, request
        self._sockets.add(socket)
        self.connections += 1
        hello = {
            "type": "hello",
            "num_connections": 1,
            "debug_info": {"host": "fake-applink"},
            "connection_info": {"app_id": "A0001"},
        }
        await socket.send_str(json.dumps(hello))
        await self._flush()
        await self._notify()
        try:
            async for frame in socket:
                if frame.type == WSMsgType.TEXT:
                    await self._on_ack(json.loads(frame.data))
        except ConnectionResetError:
            pass  # dropped on purpose by drop(abrupt=True)
        finally:
            self._sockets.discard(socket)
            if self._socket is socket:
                self._socket = None
            await self._notify()
        return socket

    async def _on_ack(self, frame: dict) -> None:
        envelope_id = frame.get("envelope_id")
        for envelope in self._envelopes:
            if envelope.envelope_id == envelope_id:
                envelope.acked = True
                envelope.ack_delay = time.monotonic() - envelope.sent_at
                envelope.ack_payload = frame.get("payload")
                self.acks.append(envelope_id)
        await self._notify()

    async def _download(self, request: web.Request) -> web.Response:
        stored = self._files.get(request.match_info["file_id"])
        if request.headers.get("Authorization") != f"Bearer {self.bot_token}" or stored is None:
            return web.Response(status=403 if stored else 404, text="forbidden or not found")
        return web.Response(body=stored[1], content_type=stored[0])

    # Web API methods

    def _auth_test(self, fields: dict) -> dict:
        return {
            "ok": True,
            "url": "https://fake.slack.com/",
            "team": "Fake",
            "user": "relaybot",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _post_message(self, fields: dict) -> dict:
        channel, text = fields.get("channel"), fields.get("text") or ""
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if not text.strip() and not fields.get("blocks"):
            return {"ok": False, "error": "no_text"}
        if len(text) > TEXT_LIMIT:
            return {"ok": False, "error": "msg_too_long"}
        message = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "text": text,
            "ts": self._next_ts(),
        }
        if fields.get("thread_ts"):
            message["thread_ts"] = fields["thread_ts"]
        if fields.get("blocks"):
            message["blocks"] = _json(fields["blocks"])
        self.posted.append({**fields, "ts": message["ts"]})
        self._bot_messages[(channel, message["ts"])] = message
        self._history.setdefault(channel, []).append(message)
        channel_type = "im" if channel.startswith("D") else "channel"
        self.send_event({**message, "channel": channel, "channel_type": channel_type})  # Slack echoes the bot's post
        return {"ok": True, "channel": channel, "ts": message["ts"], "message": message}

    def _conversations_history(self, fields: dict) -> dict:
        """Top-level messages after `oldest` (exclusive), newest first, at most `limit`, as Slack pages them."""
        found = [m for m in self._after(fields) if m.get("thread_ts", m["ts"]) == m["ts"]]
        page = list(reversed(found[-int(fields.get("limit", 100)) :]))
        return {"ok": True, "messages": page, "has_more": len(found) > len(page), "pin_count": 0}

    def _conversations_replies(self, fields: dict) -> dict:
        """A thread's parent, then its replies after `oldest` (exclusive), oldest first, at most `limit`."""
        thread = fields.get("ts", "")
        parent = [m for m in self._history.get(fields.get("channel", ""), []) if m["ts"] == thread]
        if not parent:
            return {"ok": False, "error": "thread_not_found"}
        latest = float(fields.get("latest") or "inf")
        inclusive = str(fields.get("inclusive", "")).lower() in ("1", "true")
        replies = [
            m
            for m in self._after(fields)
            if m.get("thread_ts") == thread
            and m["ts"] != thread
            and (float(m["ts"]) < latest or (inclusive and float(m["ts"]) == latest))
        ]
        page = replies[: int(fields.get("limit", 1000))]
        return {"ok": True, "messages": parent + page, "has_more": len(replies) > len(page)}

    def _after(self, fields: dict) -> list[dict]:
        oldest = float(fields.get("oldest") or 0)
        return [m for m in self._history.get(fields.get("channel", ""), []) if float(m["ts"]) > oldest]

    def _update(self, fields: dict) -> dict:
        message = self._bot_messages.get((fields.get("channel", ""), fields.get("ts", "")))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        text = fields.get("text") or ""
        if not text.strip():
            return {"ok": False, "error": "no_text"}
        if len(text) > TEXT_LIMIT:
            return {"ok": False, "error": "msg_too_long"}
        message["text"] = text
        if "blocks" in fields:
            message["blocks"] = _json(fields["blocks"])
        self.updates.append(dict(fields))
        return {"ok": True, "channel": fields["channel"], "ts": fields["ts"], "text": text}

    def _delete(self, fields: dict) -> dict:
        if self._bot_messages.pop((fields.get("channel", ""), fields.get("ts", "")), None) is None:
            return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": fields["channel"], "ts": fields["ts"]}

    def _start_stream(self, fields: dict) -> dict:
        """chat.startStream: a reply in a thread; outside DMs Slack also wants the recipient user and team."""
        channel = fields.get("channel", "")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if not fields.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (fields.get("recipient_user_id") and fields.get("recipient_team_id")):
            return {"ok": False, "error": "missing_recipient_user_id"}
        ts = self._next_ts()
        text = fields.get("markdown_text") or ""
        message = {"type": "message", "user": self.bot_user_id, "bot_id": self.bot_id, "text": text, "ts": ts}
        self._bot_messages[(channel, ts)] = message
        self.streams[ts] = {
            "channel": channel,
            "thread_ts": fields["thread_ts"],
            "text": text,
            "state": "streaming",
            "appends": [],
        }
        return {"ok": True, "channel": channel, "ts": ts}

    def _append_stream(self, fields: dict) -> dict:
        stream = self.streams.get(fields.get("ts", ""))
        if stream is None or stream["channel"] != fields.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        if stream["state"] != "streaming":
            return {"ok": False, "error": "message_not_in_streaming_state"}
        stream["text"] += fields.get("markdown_text") or ""
        stream["appends"].append(fields.get("markdown_text") or "")
        self._bot_messages[(stream["channel"], fields["ts"])]["text"] = stream["text"]
        return {"ok": True, "channel": stream["channel"], "ts": fields["ts"]}

    def _stop_stream(self, fields: dict) -> dict:
        answer = self._append_stream(fields)
        if answer["ok"]:
            self.streams[fields["ts"]]["state"] = "stopped"
        return answer

    def _upload_url(self, fields: dict) -> dict:
        if not fields.get("filename") or not str(fields.get("length", "")).isdigit():
            return {"ok": False, "error": "invalid_arguments"}
        file_id = f"F{next(self._ts):06d}"
        self._upload_slots[file_id] = {"filename": fields["filename"], "length": int(fields["length"]), "content": None}
        upload_url = f"http://127.0.0.1:{self._port}/upload/{file_id}"
        return {"ok": True, "upload_url": upload_url, "file_id": file_id}

    def _complete_upload(self, fields: dict) -> dict:
        files = fields.get("files")
        files = json.loads(files) if isinstance(files, str) else files
        shared = []
        for item in files or []:
            slot = self._upload_slots.get(item.get("id", ""))
            if slot is None or slot["content"] is None:
                return {"ok": False, "error": "file_not_found"}
            shared.append({"id": item["id"], "title": item.get("title"), **slot})
        self.shares += 1  # one completeUploadExternal shares its files as one message
        self.uploads.extend(
            {
                **item,
                "share": self.shares,
                "channel_id": fields.get("channel_id"),
                "thread_ts": fields.get("thread_ts"),
                "initial_comment": fields.get("initial_comment"),
            }
            for item in shared
        )
        return {"ok": True, "files": [{"id": item["id"], "title": item["title"]} for item in shared]}

    async def _receive_upload(self, request: web.Request) -> web.Response:
        slot = self._upload_slots.get(request.match_info["file_id"])
        if slot is None:
            return web.Response(status=404, text="Not Found")
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            part = next(iter(form.values()))
            content = part.file.read() if isinstance(part, web.FileField) else str(part).encode()
        else:
            content = await request.read()
        slot["content"] = content
        await self._notify()
        return web.Response(text=f"OK - {len(content)}")

    def _post_ephemeral(self, fields: dict) -> dict:
        """chat.postEphemeral: seen by `user` alone, never echoed as an event."""
        if not fields.get("channel") or not fields.get("user"):
            return {"ok": False, "error": "channel_not_found" if not fields.get("channel") else "user_not_found"}
        if not (fields.get("text") or "").strip() and not fields.get("blocks"):
            return {"ok": False, "error": "no_text"}
        self.ephemeral.append(dict(fields))
        return {"ok": True, "message_ts": self._next_ts()}

    def _reaction_add(self, fields: dict) -> dict:
        if error := self._missing_scope("reactions:write"):
            return error
        names = self.reactions.setdefault((fields.get("channel", ""), fields.get("timestamp", "")), [])
        if fields.get("name") in names:
            return {"ok": False, "error": "already_reacted"}
        names.append(fields.get("name", ""))
        return {"ok": True}

    def _reaction_remove(self, fields: dict) -> dict:
        if error := self._missing_scope("reactions:write"):
            return error
        names = self.reactions.get((fields.get("channel", ""), fields.get("timestamp", "")), [])
        if fields.get("name") not in names:
            return {"ok": False, "error": "no_reaction"}
        names.remove(fields["name"])
        return {"ok": True}

    def _set_status(self, fields: dict) -> dict:
        """assistant.threads.setStatus: needs chat:write (or the older assistant:write) and a thread."""
        if self.scopes is not None and not self.scopes & {"chat:write", "assistant:write"}:
            return {"ok": False, "error": "missing_scope", "needed": "chat:write"}
        if not fields.get("channel_id") or not fields.get("thread_ts") or "status" not in fields:
            return {"ok": False, "error": "invalid_arguments"}
        self.statuses.append(dict(fields))
        return {"ok": True}

    def _missing_scope(self, scope: str) -> dict | None:
        if self.scopes is None or scope in self.scopes:
            return None
        return {"ok": False, "error": "missing_scope", "needed": scope}

    def _users_info(self, fields: dict) -> dict:
        user = fields.get("user", "")
        name = self.users.get(user)
        if name is None:
            return {"ok": False, "error": "user_not_found"}
        profile = {"real_name": name, "display_name": name.split()[0]}
        return {
            "ok": True,
            "user": {"id": user, "name": name.lower(), "real_name": name, "is_bot": False, "profile": profile},
        }

    # helpers

    def _message(self, text: str, user: str, channel: str, channel_type: str, **extra: Any) -> dict:
        event = {
            "type": "message",
            "user": user,
            "text": text,
            "ts": self._next_ts(),
            "team": self.team_id,
            "channel": channel,
            "channel_type": channel_type,
            "event_ts": "",
            **extra,
        }
        event["event_ts"] = event["ts"]
        event["client_msg_id"] = str(uuid.uuid4())
        stored = {k: v for k, v in event.items() if k not in ("channel", "channel_type", "event_ts")}
        self._history.setdefault(channel, []).append(stored)
        return event

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    def _queue(self, envelope: Envelope) -> None:
        self._envelopes.append(envelope)
        task = asyncio.get_running_loop().create_task(self._flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(self) -> None:
        """Send, in order, every envelope not yet sent while a client is connected."""
        async with self._flushing:
            for envelope in self._envelopes:
                if self._socket is None or self._socket.closed:
                    return
                if not envelope.sent:
                    envelope.sent, envelope.sent_at = True, time.monotonic()
                    await self._socket.send_str(envelope.frame())

    async def _notify(self) -> None:
        await self._recorded.notify()


def _json(value: Any) -> Any:
    """A field the SDK may send JSON-encoded (form bodies) or as JSON itself."""
    return json.loads(value) if isinstance(value, str) else value


async def _fields(request: web.Request) -> dict[str, Any]:
    """A Web API call's arguments: query string plus a form or JSON body."""
    fields: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        fields.update(await request.json())
    else:
        fields.update({k: v for k, v in (await request.post()).items() if isinstance(v, str)})
    return fields
