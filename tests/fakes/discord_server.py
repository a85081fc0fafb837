"""A fake Discord (REST API and gateway websocket, aiohttp on 127.0.0.1) that the real discord.py talks to."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
import time
import uuid
import zlib
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes import discord_payloads as payloads
from tests.fakes.discord_interactions import InteractionDesk, InteractionError
from tests.fakes.waiting import RecordWaiter

TEXT_LIMIT = 2000
API_PREFIX = "/api/v10"
# Gateway intents the fake honours: what a session receives depends on what it identified with.
GUILD_MESSAGES, DIRECT_MESSAGES, MESSAGE_CONTENT = 1 << 9, 1 << 12, 1 << 15
_WEBHOOK_ROUTES = frozenset(
    {"gateway", "gateway_bot", "interaction_callback", "followup", "edit_response", "delete_response"}
)  # no bot token
_ROUTES: tuple[tuple[str, re.Pattern[str], str], ...] = tuple(
    (method, re.compile(pattern), name)
    for method, pattern, name in (
        ("GET", r"users/@me", "me"),
        ("GET", r"oauth2/applications/@me", "application"),
        ("GET", r"gateway", "gateway"),
        ("GET", r"gateway/bot", "gateway_bot"),
        ("POST", r"channels/(?P<channel>\d+)/messages", "send_message"),
        ("GET", r"channels/(?P<channel>\d+)/messages", "list_messages"),
        ("POST", r"channels/(?P<channel>\d+)/typing", "typing"),
        ("PATCH", r"channels/(?P<channel>\d+)/messages/(?P<message>\d+)", "edit_message"),
        ("DELETE", r"channels/(?P<channel>\d+)/messages/(?P<message>\d+)", "delete_message"),
        ("GET", r"channels/(?P<channel>\d+)/messages/(?P<message>\d+)", "get_message"),
        ("PUT", r"channels/(?P<channel>\d+)/messages/(?P<message>\d+)/reactions/(?P<emoji>[^/]+)/@me", "react"),
        ("DELETE", r"channels/(?P<channel>\d+)/messages/(?P<message>\d+)/reactions/(?P<emoji>[^/]+)/@me", "unreact"),
        ("POST", r"interactions/(?P<interaction>\d+)/(?P<token>[^/]+)/callback", "interaction_callback"),
        ("POST", r"webhooks/(?P<application>\d+)/(?P<token>[^/]+)", "followup"),
        (
            "PATCH",
            r"webhooks/(?P<application>\d+)/(?P<token>[^/]+)/messages/(?P<message>@original|\d+)",
            "edit_response",
        ),
        (
            "DELETE",
            r"webhooks/(?P<application>\d+)/(?P<token>[^/]+)/messages/(?P<message>@original|\d+)",
            "delete_response",
        ),
        ("GET", r"applications/(?P<application>\d+)(/guilds/(?P<guild>\d+))?/commands", "get_commands"),
        ("PUT", r"applications/(?P<application>\d+)(/guilds/(?P<guild>\d+))?/commands", "put_commands"),
    )
)
_ERROR_BODIES = {
    401: {"message": "401: Unauthorized", "code": 0},
    403: {"message": "Missing Permissions", "code": 50013},
    404: {"message": "Unknown Channel", "code": 10003},
    500: {"message": "500: Internal Server Error", "code": 0},
    502: {"message": "502: Bad Gateway", "code": 0},
    503: {"message": "503: Service Unavailable", "code": 0},
}


class ApiError(Exception):
    """A Discord error answer: a JSON body with `message` and `code`, maybe `errors`, plus headers."""

    def __init__(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
        super().__init__(body.get("message"))
        self.status, self.body, self.headers = status, body, headers or {}

    def response(self) -> web.Response:
        """The answer real Discord gives for this error."""
        return _json(self.body, self.status, self.headers)


def rate_limited(retry_after: float, is_global: bool = False, bucket: str = "fake-bucket") -> ApiError:
    """Discord's 429: JSON body plus rate-limit headers; `Via` tells discord.py it is not a Cloudflare ban."""
    headers = {
        "Retry-After": str(math.ceil(retry_after)),
        "X-RateLimit-Limit": "5",
        "X-RateLimit-Remaining": "0",
        "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
        "X-RateLimit-Reset-After": f"{retry_after:.3f}",
        "X-RateLimit-Bucket": bucket,
        "X-RateLimit-Scope": "global" if is_global else "user",
        "Via": "1.1 google",
    }
    body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global}
    return ApiError(429, body, headers)


def invalid_form(field_name: str, code: str, message: str) -> ApiError:
    """Discord's 400 "Invalid Form Body" (code 50035) naming the field at fault."""
    errors = {field_name: {"_errors": [{"code": code, "message": message}]}}
    return ApiError(400, {"message": "Invalid Form Body", "code": 50035, "errors": errors})


@dataclass
class _Session:
    """One gateway session: every dispatch it was sent, numbered by sequence (log[i] has s = i + 1)."""

    id: str
    intents: int
    log: list[dict] = field(default_factory=list)


@dataclass(eq=False)
class _Connection:
    """One websocket; `cursor` is the last sequence number written to it."""

    ws: web.WebSocketResponse
    request: web.Request
    compressor: Any = None
    cursor: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def send(self, frame: dict) -> None:
        """Write one frame: zlib-stream (one compressor per connection, sync-flushed) or plain text."""
        text = json.dumps(frame)
        if self.compressor is None:
            await self.ws.send_str(text)
        else:
            await self.ws.send_bytes(self.compressor.compress(text.encode()) + self.compressor.flush(zlib.Z_SYNC_FLUSH))


class FakeDiscord:
    """Discord on 127.0.0.1: push user messages with `dm`/`guild_message`/`thread_message`, read `sent`."""

    def __init__(
        self,
        token: str = "fake-discord-token",
        bot_id: int = 900,
        guild_id: int = 5000,
        channel_id: int = 5001,
        heartbeat_interval: float = 1.0,
        message_content_allowed: bool = True,
    ) -> None:
        self.token, self.bot_id, self.guild_id, self.channel_id = token, bot_id, guild_id, channel_id
        self.heartbeat_interval = heartbeat_interval
        self.message_content_allowed = message_content_allowed  # the developer portal's switch for the intent
        self.sent: list[dict] = []
        self.edits: list[dict] = []
        self.uploads: list[dict] = []
        self.typing: list[int] = []
        self.reactions: list[tuple[str, int, str]] = []  # ("add" | "remove", message id, emoji)
        self.fetched: list[int] = []
        self.calls: list[tuple[str, str]] = []
        self.received: list[dict] = []
        self.connections: list[str] = []
        self.down = False  # while True, REST answers 503 and new gateway connections are refused
        self._users: dict[int, dict] = {bot_id: payloads.user(bot_id, "relay", bot=True)}
        self._channels: dict[int, dict] = {channel_id: payloads.text_channel(channel_id, guild_id, "general")}
        self._dm_channels: dict[int, int] = {}
        self._messages: dict[int, dict] = {}
        self._files: dict[int, tuple[bytes, str]] = {}
        self._nonces: dict[str, dict] = {}
        self._failures: dict[str, deque[ApiError]] = {}
        self._ids = itertools.count(10_000)
        self.interactions = InteractionDesk(self._users[bot_id], self._ids, self._messages)
        self._session: _Session | None = None
        self._live: _Connection | None = None
        self._connections: set[_Connection] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._recorded = RecordWaiter()
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def api_base(self) -> str:
        """What discord.py's `Route.BASE` should be."""
        return f"http://127.0.0.1:{self._port}{API_PREFIX}"

    @property
    def gateway_url(self) -> str:
        """What discord.py's `DiscordWebSocket.DEFAULT_GATEWAY` should be."""
        return f"ws://127.0.0.1:{self._port}/gateway"

    async def start(self, port: int = 0) -> None:
        """Bind 127.0.0.1 (port 0 picks a free one)."""
        app = web.Application()
        app.router.add_route("*", API_PREFIX + "/{path:.+}", self._api)
        app.router.add_get("/gateway", self._gateway)
        app.router.add_get("/resume", self._gateway)
        app.router.add_get("/attachments/{channel}/{id}/{name}", self._download)
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=1.0)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", port).start()
        self._port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Close every websocket (1001 going away) and stop serving."""
        for connection in list(self._connections):
            await connection.ws.close(code=1001)
        for task in self._tasks:
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # inbound: what users do

    def dm(self, text: str, *, user_id: int = 42, attachments: Sequence[dict] = (), **extra: Any) -> dict:
        """A direct message from a user (no guild_id; the DM channel is made up on first use)."""
        channel = self._dm_channels.setdefault(user_id, next(self._ids))
        return self._dispatch_message(self._user_message(channel, None, text, user_id, attachments, **extra))

    def dm_while_offline(self, text: str, *, user_id: int = 42) -> dict:
        """A direct message sent while the bot is disconnected: stored in the channel's history, not dispatched."""
        channel = self._dm_channels.setdefault(user_id, next(self._ids))
        message = self._user_message(channel, None, text, user_id, ())
        self._messages[int(message["id"])] = message
        return message

    def guild_message(
        self,
        text: str,
        *,
        channel_id: int | None = None,
        user_id: int = 42,
        mention_bot: bool = False,
        reply_to: dict | None = None,
        resolve_reply: bool = True,
        attachments: Sequence[dict] = (),
        **extra: Any,
    ) -> dict:
        """A message in a guild text channel; `mention_bot` prefixes `<@bot>`, `reply_to` makes it a reply.

        With `resolve_reply=False` the gateway leaves the replied-to message out, as Discord sometimes does.
        """
        channel_id = channel_id or self.channel_id
        if channel_id not in self._channels:
            self._channels[channel_id] = payloads.text_channel(channel_id, self.guild_id, f"channel-{channel_id}")
            self.dispatch("CHANNEL_CREATE", self._channels[channel_id])
        message = self._user_message(channel_id, self.guild_id, text, user_id, attachments, **extra)
        if mention_bot:
            message["content"] = f"<@{self.bot_id}> {text}"
            message["mentions"].append(self._mention(self.bot_id))
        if reply_to is not None:
            message = payloads.as_reply(message, self._messages[int(reply_to["id"])], resolve_reply)
        return self._dispatch_message(message)

    def thread_message(self, text: str, *, thread_id: int = 5100, parent_id: int | None = None, **kwargs: Any) -> dict:
        """A message in a public thread (channel type 11); a new thread is announced with THREAD_CREATE first."""
        if thread_id not in self._channels:
            parent = parent_id or self.channel_id
            self._channels[thread_id] = payloads.thread(thread_id, self.guild_id, parent)
            self.dispatch("THREAD_CREATE", {**self._channels[thread_id], "newly_created": True})
        return self.guild_message(text, channel_id=thread_id, **kwargs)

    def attachment(self, filename: str, content: bytes, content_type: str | None = None, voice: bool = False) -> dict:
        """An attachment payload for `attachments=[…]`; its bytes are served at its `url`."""
        attachment_id = next(self._ids)
        self._files[attachment_id] = (content, content_type or "application/octet-stream")
        url = f"http://127.0.0.1:{self._port}/attachments/0/{attachment_id}/{filename}"
        return payloads.attachment(attachment_id, filename, len(content), url, content_type, voice)

    def edit(self, message: dict, text: str) -> dict:
        """The author edits `message`: new content and `edited_timestamp`, dispatched as MESSAGE_UPDATE."""
        stored = self._messages[int(message["id"])]
        stored.update(content=text, edited_timestamp=payloads.now())
        self.dispatch("MESSAGE_UPDATE", dict(stored))
        return stored

    def command(
        self, name: str, args: str = "", *, user_id: int = 42, channel_id: int | None = None, dm: bool = False
    ) -> dict:
        """A user runs the slash command `/name args` in a guild channel (or in their DM with `dm=True`)."""
        options = [{"name": "args", "type": 3, "value": args}] if args else []
        data = {"id": str(next(self._ids)), "name": name, "type": 1, "options": options}
        return self._interact(2, data, user_id, channel_id, dm, None)

    def press(self, message: dict, custom_id: str, *, user_id: int = 42) -> dict:
        """A user presses the button `custom_id` under the bot's `message` (as stored, with its components)."""
        stored = self._messages[int(message["id"])]
        data = {"custom_id": custom_id, "component_type": 2}
        in_dm = "guild_id" not in stored
        return self._interact(3, data, user_id, int(stored["channel_id"]), in_dm, dict(stored))

    def redeliver(self, message: dict) -> None:
        """Dispatch the same MESSAGE_CREATE again, with a new sequence number."""
        self.dispatch("MESSAGE_CREATE", message)

    def dispatch(self, event: str, data: dict) -> None:
        """Add a dispatch to the session and write it to the live connection (or keep it for a RESUME)."""
        if self._session is None:
            raise RuntimeError("no gateway session yet: wait until the bot has connected")
        if event in ("MESSAGE_CREATE", "MESSAGE_UPDATE") and (data := self._as_seen_by_bot(data)) is None:
            return
        self._session.log.append({"op": 0, "t": event, "s": len(self._session.log) + 1, "d": data})
        self._spawn(self._flush())

    # the gateway under test

    def reconnect(self) -> None:
        """Send op 7 RECONNECT; until the client resumes, dispatches are kept for replay."""
        connection, self._live = self._live, None
        if connection is not None:
            self._spawn(self._send(connection, {"op": 7, "d": None}))

    def drop(self) -> None:
        """Cut the live websocket without a close frame, as a network failure would."""
        connection, self._live = self._live, None
        if connection is not None and connection.request.transport is not None:
            connection.request.transport.abort()

    def fail(
        self, route: str, *, status: int = 429, retry_after: float = 0.05, is_global: bool = False, times: int = 1
    ) -> None:
        """Make the next `times` calls of `route` (send_message, typing, me…) fail with Discord's error body."""
        if status == 429:
            error = rate_limited(retry_after, is_global)
        else:
            error = ApiError(status, _ERROR_BODIES.get(status, {"message": f"{status}: error", "code": 0}))
        self._failures.setdefault(route, deque()).extend(error for _ in range(times))

    # outbound: what the bot did

    async def wait_for_sent(self, n: int, timeout: float = 10) -> list[dict]:
        """The first `n` messages the bot created, once that many exist."""

        def progress() -> str:
            return f"{len(self.sent)} of {n} sent: {self.sent}"

        await self._recorded.wait_until(lambda: len(self.sent) >= n, timeout, progress)
        return self.sent[:n]

    async def wait_until(self, condition: Any, what: str = "the condition", timeout: float = 10) -> None:
        """Return once `condition()` holds on what the fake recorded."""
        await self._recorded.wait_until(condition, timeout, lambda: f"not yet {what}")

    async def wait_for_op(self, op: int, n: int = 1, timeout: float = 10) -> list[dict]:
        """The first `n` gateway frames with opcode `op` the client sent (2 IDENTIFY, 6 RESUME, 1 heartbeat)."""

        def frames() -> list[dict]:
            return [f for f in self.received if f.get("op") == op]

        await self._recorded.wait_until(lambda: len(frames()) >= n, timeout, lambda: f"{len(frames())} of {n} op {op}")
        return frames()[:n]

    async def wait_for_call(self, path: str, n: int = 1, timeout: float = 10) -> None:
        """Return once the REST path (such as `users/@me`) has been called `n` times."""

        def count() -> int:
            return sum(1 for _, called in self.calls if called == path)

        await self._recorded.wait_until(lambda: count() >= n, timeout, lambda: f"{count()} of {n} calls of {path}")

    # the wire: REST

    async def _api(self, request: web.Request) -> web.Response:
        path = request.match_info["path"]
        self.calls.append((request.method, path))
        await self._recorded.notify()
        if self.down:
            return web.Response(status=503, text="<html>503 Service Unavailable</html>", content_type="text/html")
        for method, pattern, name in _ROUTES:  # noqa: B007 - `name` is used after the loop
            if method == request.method and (match := pattern.fullmatch(path)):
                break
        else:
            return ApiError(404, {"message": "404: Not Found", "code": 0}).response()
        try:
            if name not in _WEBHOOK_ROUTES and request.headers.get("Authorization") != f"Bot {self.token}":
                raise ApiError(401, _ERROR_BODIES[401])
            if self._failures.get(name):
                raise self._failures[name].popleft()
            result = await self._answer(name, match.groupdict(), request)
        except ApiError as error:
            return error.response()
        except InteractionError as error:
            return _json(error.body, error.status)
        finally:
            await self._recorded.notify()
        return web.Response(status=204) if result is None else _json(result)

    async def _answer(self, name: str, params: dict[str, str], request: web.Request) -> dict | list | None:
        if name == "me":
            return {**self._users[self.bot_id], "verified": True, "mfa_enabled": False, "flags": 0}
        if name == "application":
            return payloads.application(self._users[self.bot_id], payloads.user(42, "owner"))
        if name == "gateway":
            return {"url": self.gateway_url}
        if name == "gateway_bot":
            limit = {"total": 1000, "remaining": 999, "reset_after": 86_400_000, "max_concurrency": 1}
            return {"url": self.gateway_url, "shards": 1, "session_start_limit": limit}
        if "channel" not in params:
            return await self._answer_application(name, params, request)
        channel_id = int(params["channel"])
        if channel_id not in self._channels and channel_id not in self._dm_channels.values():
            raise ApiError(404, _ERROR_BODIES[404])
        if name == "typing":
            self.typing.append(channel_id)
            return None
        if name == "list_messages":
            return self._history(channel_id, request.query)
        if name == "edit_message":
            return self._edit_message(channel_id, int(params["message"]), await request.json())
        if name == "get_message":
            self.fetched.append(int(params["message"]))
            found = self._messages.get(int(params["message"]))
            if found is None or int(found["channel_id"]) != channel_id:
                raise ApiError(404, {"message": "Unknown Message", "code": 10008})
            return found
        if name in ("react", "unreact"):
            if int(params["message"]) not in self._messages:
                raise ApiError(404, {"message": "Unknown Message", "code": 10008})
            self.reactions.append(("add" if name == "react" else "remove", int(params["message"]), params["emoji"]))
            return None
        if name == "delete_message":
            if self._messages.pop(int(params["message"]), None) is None:
                raise ApiError(404, {"message": "Unknown Message", "code": 10008})
            return None
        if request.content_type.startswith("multipart/"):
            return self._create_message(channel_id, await self._multipart(channel_id, request))
        return self._create_message(channel_id, await request.json())

    async def _answer_application(self, name: str, params: dict[str, str], request: web.Request) -> dict | list | None:
        """Interaction callbacks, webhook follow-ups and application commands."""
        desk = self.interactions
        if name == "interaction_callback":
            return desk.callback(int(params["interaction"]), params["token"], await request.json())
        body = await self._json_or_multipart(request)
        if name == "followup":
            return desk.followup(int(params["application"]), params["token"], body)
        if name == "edit_response":
            return desk.edit(int(params["application"]), params["token"], params["message"], body)
        if name == "delete_response":
            return desk.delete(int(params["application"]), params["token"], params["message"])
        guild = int(params["guild"]) if params.get("guild") else None
        if name == "get_commands":
            return desk.commands.get(guild, [])
        return desk.put_commands(guild, await request.json())

    async def _json_or_multipart(self, request: web.Request) -> Any:
        if request.method == "GET" or not request.can_read_body:
            return {}
        if request.content_type.startswith("multipart/"):
            form = await request.post()
            return json.loads(str(form["payload_json"]))
        return await request.json()

    async def _multipart(self, channel_id: int, request: web.Request) -> dict:
        """A message with files: `payload_json` plus `files[n]` parts, as discord.py sends them."""
        form = await request.post()
        body = json.loads(str(form["payload_json"]))
        for name, part in form.items():
            if name.startswith("files[") and isinstance(part, web.FileField):
                content = part.file.read()
                self.uploads.append({"channel_id": channel_id, "filename": part.filename, "content": content})
        return body

    def _history(self, channel_id: int, query: Any) -> list[dict]:
        """`GET /channels/{id}/messages?after=&limit=`: the `limit` oldest after `after`, newest first, like Discord."""
        after, limit = int(query.get("after", 0)), min(int(query.get("limit", 50)), 100)
        found = sorted(
            (m for m in self._messages.values() if int(m["channel_id"]) == channel_id and int(m["id"]) > after),
            key=lambda m: int(m["id"]),
        )
        return list(reversed(found[:limit]))

    def _edit_message(self, channel_id: int, message_id: int, body: dict) -> dict:
        message = self._messages.get(message_id)
        if message is None or int(message["channel_id"]) != channel_id:
            raise ApiError(404, {"message": "Unknown Message", "code": 10008})
        if int(message["author"]["id"]) != self.bot_id:
            raise ApiError(403, {"message": "Cannot edit a message authored by another user", "code": 50005})
        content = body.get("content") or ""
        if len(content) > TEXT_LIMIT:
            raise invalid_form("content", "BASE_TYPE_MAX_LENGTH", f"Must be {TEXT_LIMIT} or fewer in length.")
        message["content"] = content
        if "components" in body:
            message["components"] = body["components"] or []
        self.edits.append({**body, "id": message["id"], "channel_id": channel_id})
        return message

    def _create_message(self, channel_id: int, body: dict) -> dict:
        nonce = str(body["nonce"]) if body.get("nonce") is not None else None
        if nonce and body.get("enforce_nonce") and nonce in self._nonces:
            return self._nonces[nonce]  # Discord's idempotency: same nonce, same message, nothing new created
        content = body.get("content") or ""
        if len(content) > TEXT_LIMIT:
            raise invalid_form("content", "BASE_TYPE_MAX_LENGTH", f"Must be {TEXT_LIMIT} or fewer in length.")
        if len(body.get("attachments") or []) > 10:
            raise invalid_form("attachments", "BASE_TYPE_MAX_LENGTH", "Must be 10 or fewer in length.")
        if not content.strip() and not body.get("embeds") and not body.get("attachments"):
            raise ApiError(400, {"message": "Cannot send an empty message", "code": 50006})
        guild_id = self.guild_id if channel_id in self._channels else None
        message = payloads.message(next(self._ids), channel_id, guild_id, self._users[self.bot_id], content)
        message["components"] = body.get("components") or []
        if reference := body.get("message_reference"):
            replied = self._messages.get(int(reference["message_id"]))
            if replied is None and reference.get("fail_if_not_exists", True):
                raise invalid_form("message_reference", "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
            if replied is not None:
                message = payloads.as_reply(message, replied)
        if nonce:
            message["nonce"] = nonce
            self._nonces[nonce] = message
        self._messages[int(message["id"])] = message
        self.sent.append({**body, "id": message["id"], "channel_id": channel_id})
        if self._session is not None:
            self.dispatch("MESSAGE_CREATE", message)  # Discord echoes the bot's own messages to it
        return message

    async def _download(self, request: web.Request) -> web.Response:
        content, content_type = self._files.get(int(request.match_info["id"]), (None, ""))
        if content is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=content, headers={"Content-Type": content_type})

    # the wire: gateway

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        if self.down:
            return web.Response(status=503, text="Service Unavailable")
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        compress = request.query.get("compress") == "zlib-stream"
        connection = _Connection(ws, request, zlib.compressobj() if compress else None)
        self._connections.add(connection)
        self.connections.append(request.path_qs)
        try:
            await self._send(connection, {"op": 10, "d": {"heartbeat_interval": int(self.heartbeat_interval * 1000)}})
            async for frame in ws:
                if frame.type is WSMsgType.TEXT:
                    await self._on_frame(connection, json.loads(frame.data))
        except ConnectionError:
            pass
        finally:
            self._connections.discard(connection)
            if self._live is connection:
                self._live = None
        return ws

    async def _on_frame(self, connection: _Connection, frame: dict) -> None:
        self.received.append(frame)
        await self._recorded.notify()
        op, data = frame.get("op"), frame.get("d") or {}
        if op == 1:
            await self._send(connection, {"op": 11})
        elif op in (2, 6) and data.get("token") != self.token:
            await connection.ws.close(code=4004, message=b"Authentication failed.")
        elif op == 2 and int(data.get("intents") or 0) & MESSAGE_CONTENT and not self.message_content_allowed:
            await connection.ws.close(code=4014, message=b"Disallowed intent(s).")
        elif op == 2:
            self._session = _Session(uuid.uuid4().hex, int(data.get("intents") or 0))
            self._live = connection
            bot, resume_url = self._users[self.bot_id], f"ws://127.0.0.1:{self._port}/resume"
            self.dispatch("READY", payloads.ready(bot, [self.guild_id], self._session.id, resume_url))
            self.dispatch("GUILD_CREATE", payloads.guild(self.guild_id, self._users.values(), self._channels.values()))
        elif op == 6:
            if self._session is None or data.get("session_id") != self._session.id:
                await self._send(connection, {"op": 9, "d": False})
                return
            connection.cursor = int(data.get("seq") or 0)
            self._live = connection
            self.dispatch("RESUMED", {})  # after the missed dispatches, which the flush replays first

    async def _flush(self) -> None:
        """Write the session's dispatches the live connection has not had yet, in sequence order."""
        connection = self._live
        if connection is None or self._session is None:
            return
        async with connection.lock:
            while connection is self._live and connection.cursor < len(self._session.log):
                await connection.send(self._session.log[connection.cursor])
                connection.cursor += 1

    async def _send(self, connection: _Connection, frame: dict) -> None:
        async with connection.lock:
            await connection.send(frame)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _as_seen_by_bot(self, message: dict) -> dict | None:
        """The message as the session's intents let it through: none, or without content, or whole."""
        assert self._session is not None
        intents, in_guild = self._session.intents, "guild_id" in message
        if not intents & (GUILD_MESSAGES if in_guild else DIRECT_MESSAGES):
            return None
        mentioned = any(int(user["id"]) == self.bot_id for user in message["mentions"])
        if intents & MESSAGE_CONTENT or not in_guild or mentioned or int(message["author"]["id"]) == self.bot_id:
            return message
        return {**message, "content": "", "attachments": [], "embeds": []}

    # building messages

    def _user_message(
        self, channel_id: int, guild_id: int | None, text: str, user_id: int, attachments: Sequence[dict], **extra: Any
    ) -> dict:
        is_bot = bool(extra.pop("bot", False))
        author = self._users.setdefault(user_id, payloads.user(user_id, f"user{user_id}", is_bot))
        message = payloads.message(next(self._ids), channel_id, guild_id, author, text)
        message["attachments"] = list(attachments)
        if any("duration_secs" in a for a in attachments):
            message["flags"] |= payloads.IS_VOICE_MESSAGE
        return {**message, **extra}

    def _interact(
        self, kind: int, data: dict, user_id: int, channel_id: int | None, dm: bool, message: dict | None
    ) -> dict:
        user = self._users.setdefault(user_id, payloads.user(user_id, f"user{user_id}"))
        if dm:
            channel_id = self._dm_channels.setdefault(user_id, next(self._ids))
            channel, guild_id = payloads.dm_channel(channel_id, user), None
        else:
            channel, guild_id = self._channels[channel_id or self.channel_id], self.guild_id
        payload = self.interactions.interaction(kind, channel, guild_id, user, data, message)
        self.dispatch("INTERACTION_CREATE", payload)
        return payload

    def _dispatch_message(self, message: dict) -> dict:
        self._messages[int(message["id"])] = message
        self.dispatch("MESSAGE_CREATE", message)
        return message

    def _mention(self, user_id: int) -> dict:
        return {**self._users[user_id], "member": payloads.member_fields()}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON with the bare `application/json` type: discord.py decodes nothing else."""
    headers = {"Content-Type": "application/json", **(headers or {})}
    return web.Response(body=json.dumps(data).encode(), status=status, headers=headers)
