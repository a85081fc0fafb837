"""A fake Mattermost server (REST API v4 and its WebSocket, aiohttp on 127.0.0.1) for one bot account.

The wire format, from Mattermost's API reference (api.mattermost.com) and its server's `model/` package:

- Every call carries `Authorization: Bearer <token>` (a bot's personal access token); errors are
  `{"id": "<i18n id>", "message", "detailed_error", "request_id", "status_code"}` with the same HTTP status (401
  `api.context.session_expired.app_error` for a bad token, 403 `api.context.permissions.app_error`, 400
  `model.post.is_valid.msg.app_error` for a message over 16,383 characters). The rate limiter answers 429 with a
  plain-text body and `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` and `Retry-After` (seconds).
- `GET /api/v4/users/me` → the user (`id`, `username`, `is_bot`); `GET /api/v4/users/me/teams` → `[{"id", "name"}]`.
- `POST /api/v4/posts` `{"channel_id", "message", "root_id"?, "file_ids"?, "props"?}` → 201 and the post;
  `GET /api/v4/channels/{id}/posts?since=<ms>` (posts made or changed since) and `GET /api/v4/posts/{id}/thread`
  → a PostList `{"order": [ids, newest first], "posts": {id: post}}`;
  `PUT /api/v4/posts/{id}/patch` `{"message"?, "props"?}` → 200 and the post (an unchanged message is no error);
  `DELETE /api/v4/posts/{id}` → `{"status": "OK"}`; `POST /api/v4/posts/ephemeral` `{"user_id", "post": {"channel_id",
  "message"}}` → 201, a post only that user sees (403 without the create_post_ephemeral permission, which only
  system admins have by default).
- Files: `POST /api/v4/files` multipart `channel_id` + `files` (one part per file, with its filename) → 201
  `{"file_infos": [{"id", "name", "extension", "size", "mime_type", …}], "client_ids": []}`; a post then names them in
  `file_ids` (at most 5) and carries them in `metadata.files`; `GET /api/v4/files/{id}` → the bytes.
- Reactions: `POST /api/v4/reactions` `{"user_id", "post_id", "emoji_name"}` → 201;
  `DELETE /api/v4/users/{user_id}/posts/{post_id}/reactions/{emoji_name}` → `{"status": "OK"}`.
- Slash commands: `POST /api/v4/commands` `{"team_id", "trigger", "method": "P", "url", "auto_complete",
  "auto_complete_desc", …}` → 201 with the command and its `token`; `GET /api/v4/commands?team_id=&custom_only=true`
  lists them; `DELETE /api/v4/commands/{id}`.
- WebSocket `GET /api/v4/websocket`: the client authenticates with `{"seq": 1, "action":
  "authentication_challenge", "data": {"token"}}` (answered `{"status": "OK", "seq_reply": 1}`; a bad token closes
  the socket; the server ignores the challenge on a connection its upgrade's Authorization header already
  authenticated, as Mattermost's own Go client sends both), then sends `{"event": "hello", "data":
  {"server_version", "connection_id"}, "broadcast": {…}, "seq": 0}` and events numbered on from there. This fake
  takes the challenge path only. Client actions (`user_typing` with `{"channel_id", "parent_id"}`) are answered by
  `seq_reply`. Event shapes are in `mattermost_payloads`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import WSMsgType, web
from aiohttp.typedefs import Handler

from tests.fakes.loopback import LoopbackServer
from tests.fakes.mattermost_payloads import action_request, command_request, mm_error, new_id, post, posted
from tests.fakes.waiting import RecordWaiter

TEXT_LIMIT = 16_383
VERSION = "10.5.0"


class FakeMattermost(LoopbackServer):
    """One team with a town square and the bot; users write with `dm`/`channel_message`/`dm_file`."""

    def __init__(self, token: str = "mm-bot-token", bot_username: str = "relaybot") -> None:
        super().__init__()
        self.token, self.bot_username = token, bot_username
        self.bot_id, self.team_id, self.town_square = new_id(), new_id(), new_id()
        self.users: dict[str, str] = {}  # user id -> username
        self.channel_types: dict[str, str] = {self.town_square: "O"}
        self.posts: dict[str, dict[str, Any]] = {}
        self.sent: list[dict[str, Any]] = []  # the bot's posts, in order
        self.edits: list[tuple[str, str]] = []  # (post id, new message)
        self.deleted: list[str] = []
        self.ephemeral: list[tuple[str, str]] = []  # (the user who sees it, message)
        self.may_post_ephemeral = False
        self.uploads: dict[str, tuple[bytes, str, str]] = {}  # file id -> bytes, name, mime type
        self.reactions: list[tuple[str, str, bool]] = []  # (post id, emoji name, added?)
        self.typing: list[tuple[str, str]] = []  # (channel id, parent id)
        self.commands: dict[str, dict[str, Any]] = {}
        self.answers: list[tuple[int, dict[str, Any]]] = []  # the bot's answers to presses and commands
        self.failures: deque[web.Response] = deque()  # answers for the next POST /posts
        self.attempts = 0
        self.connections = 0
        self._dms: dict[str, str] = {}  # user id -> DM channel id
        self._outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._waiter = RecordWaiter()
        self._sockets: set[web.WebSocketResponse] = set()

    @property
    def url(self) -> str:
        """The server's URL, as `channels.mattermost.url`."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.middlewares.append(self._authorised)
        api = "/api/v4"
        app.router.add_get(f"{api}/users/me", self._me)
        app.router.add_get(f"{api}/users/me/teams", self._teams)
        app.router.add_post(f"{api}/posts", self._create_post)
        app.router.add_post(f"{api}/posts/ephemeral", self._create_ephemeral)
        app.router.add_put(f"{api}/posts/{{post_id}}/patch", self._patch_post)
        app.router.add_delete(f"{api}/posts/{{post_id}}", self._delete_post)
        app.router.add_get(f"{api}/posts/{{post_id}}/thread", self._thread)
        app.router.add_get(f"{api}/channels/{{channel_id}}/posts", self._channel_posts)
        app.router.add_post(f"{api}/files", self._upload)
        app.router.add_get(f"{api}/files/{{file_id}}", self._download)
        app.router.add_post(f"{api}/reactions", self._react)
        app.router.add_delete(f"{api}/users/{{user_id}}/posts/{{post_id}}/reactions/{{emoji}}", self._unreact)
        app.router.add_post(f"{api}/commands", self._add_command)
        app.router.add_get(f"{api}/commands", self._list_commands)
        app.router.add_delete(f"{api}/commands/{{command_id}}", self._delete_command)
        app.router.add_get(f"{api}/websocket", self._websocket)

    async def __aexit__(self, *exc_info: object) -> None:
        for socket in list(self._sockets):
            await socket.close()
        await super().__aexit__(*exc_info)

    # What users do.

    def user(self, user_id: str, name: str | None = None) -> str:
        """Make `user_id` known (username `name` or `user<id>`); return the id."""
        self.users.setdefault(user_id, name or f"user{user_id}")
        return user_id

    def dm_channel(self, user_id: str) -> str:
        """The direct channel between `user_id` and the bot."""
        if user_id not in self._dms:
            self._dms[user_id] = new_id()
            self.channel_types[self._dms[user_id]] = "D"
        return self._dms[user_id]

    def dm(self, text: str, user_id: str, files: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """`user_id` writes to the bot directly; returns the event pushed."""
        the_post = post(self.user(user_id), self.dm_channel(user_id), text, files=files)
        return self.push_post(the_post, mentions=[self.bot_id])

    def channel_message(self, text: str, user_id: str, mention: bool, root_id: str = "") -> dict[str, Any]:
        """`user_id` writes in the town square (in the thread `root_id`), `@relaybot` first when `mention`."""
        text = f"@{self.bot_username} {text}" if mention else text
        the_post = post(self.user(user_id), self.town_square, text, root_id)
        return self.push_post(the_post, mentions=[self.bot_id] if mention else None)

    def dm_file(self, content: bytes, name: str, mime_type: str, user_id: str, text: str = "") -> dict[str, Any]:
        """`user_id` uploads a file into the DM and posts it."""
        info = self._file_info(content, name, mime_type, self.dm_channel(user_id), user_id)
        return self.dm(text, user_id, files=[info])

    def dm_while_offline(self, text: str, user_id: str) -> dict[str, Any]:
        """`user_id` writes to the bot while it is not connected: stored, its event reaching no one."""
        the_post = post(self.user(user_id), self.dm_channel(user_id), text)
        self.posts[the_post["id"]] = the_post
        return the_post

    def push_post(self, the_post: dict[str, Any], mentions: list[str] | None = None) -> dict[str, Any]:
        """Store `the_post` and queue its `posted` event; returns the event."""
        self.posts[the_post["id"]] = the_post
        channel_type = self.channel_types[the_post["channel_id"]]
        sender = "@" + self.users.get(the_post["user_id"], self.bot_username)
        event = posted("posted", the_post, channel_type, sender, self.team_id, mentions)
        self.push(event)
        return event

    def edit(self, event: dict[str, Any], text: str) -> dict[str, Any]:
        """The user edits the post `event` carried; queues the `post_edited` event."""
        the_post = {**json.loads(event["data"]["post"]), "message": text, "edit_at": 1}
        self.posts[the_post["id"]] = the_post
        edited = {**event, "event": "post_edited", "data": {**event["data"], "post": json.dumps(the_post)}}
        self.push(edited)
        return edited

    def push(self, event: dict[str, Any]) -> None:
        """Queue an event for the bot's WebSocket (held while it is not connected)."""
        self._outbox.put_nowait(event)

    async def press(self, sent: dict[str, Any], label: str, user_id: str) -> int:
        """`user_id` presses the button `label` under the bot's post `sent`: POST to its integration URL."""
        actions = [action for attachment in sent["props"]["attachments"] for action in attachment["actions"]]
        action = next(action for action in actions if action["name"] == label)
        body = action_request(sent, action["integration"].get("context") or {}, self.user(user_id), "", self.team_id)
        return await self._call_integration(action["integration"]["url"], json=body)

    async def slash(self, trigger: str, text: str, user_id: str, channel_id: str | None = None) -> int:
        """`user_id` runs `/trigger text` where a registered command has that trigger."""
        command = next(c for c in self.commands.values() if c["trigger"] == trigger)
        channel = channel_id or self.dm_channel(user_id)
        name = self.users.get(self.user(user_id), "")
        where = f"{self.bot_id}__{user_id}" if self.channel_types[channel] == "D" else "town-square"
        form = command_request(trigger, text, command["token"], channel, user_id, name, self.team_id, where)
        return await self._call_integration(command["url"], data=form)

    async def _call_integration(self, url: str, **body: Any) -> int:
        async with aiohttp.ClientSession() as session, session.post(url, **body) as response:
            answer = await response.json(content_type=None) if response.status == 200 else {}
            self.answers.append((response.status, answer or {}))
            if isinstance(answer, dict) and (update := answer.get("update")):
                post_id = body["json"]["post_id"]
                self.posts[post_id] = {**self.posts[post_id], **update}
            await self._waiter.notify()
            return response.status

    async def drop(self) -> None:
        """Close the bot's WebSocket, as a restarting server or a lost connection does."""
        for socket in list(self._sockets):
            await socket.close(code=1001)

    # What tests read.

    def sent_texts(self) -> list[str]:
        """The messages of the bot's posts as they read now."""
        return [self.posts[p["id"]]["message"] for p in self.sent]

    async def wait_for_sent(self, n: int, timeout: float = 10) -> None:
        await self.wait_until(lambda: len(self.sent) >= n, f"{n} posts", timeout)

    async def wait_until(self, ready: Callable[[], bool], what: str, timeout: float = 10) -> None:
        await self._waiter.wait_until(ready, timeout, lambda: f"{len(self.sent)} posts, waiting for {what}")

    # The REST API.

    @web.middleware
    async def _authorised(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Every REST call needs the token (the WebSocket authenticates by its challenge)."""
        if request.path.endswith("/websocket") or request.headers.get("Authorization") == f"Bearer {self.token}":
            return await handler(request)
        message = "Invalid or expired session, please login again."
        return mm_error(401, "api.context.session_expired.app_error", message)

    async def _me(self, request: web.Request) -> web.Response:
        return web.json_response({"id": self.bot_id, "username": self.bot_username, "is_bot": True})

    async def _teams(self, request: web.Request) -> web.Response:
        return web.json_response([{"id": self.team_id, "name": "team", "display_name": "Team"}])

    async def _create_post(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.attempts += 1
        await self._waiter.notify()
        if self.failures:
            return self.failures.popleft()
        if len(body.get("message") or "") > TEXT_LIMIT:
            return mm_error(400, "model.post.is_valid.msg.app_error", "Invalid Message")
        files = [self._info_of(file_id) for file_id in body.get("file_ids") or []]
        the_post = post(self.bot_id, body["channel_id"], body.get("message") or "", body.get("root_id") or "", files)
        the_post["props"] = body.get("props") or {}
        self.sent.append(the_post)
        self.push_post(the_post)  # Mattermost sends the bot its own posts too
        await self._waiter.notify()
        return web.json_response(the_post, status=201)

    async def _create_ephemeral(self, request: web.Request) -> web.Response:
        if not self.may_post_ephemeral:
            return mm_error(403, "api.context.permissions.app_error", "You do not have the appropriate permissions.")
        body = await request.json()
        self.ephemeral.append((body["user_id"], body["post"]["message"]))
        await self._waiter.notify()
        return web.json_response(post(self.bot_id, body["post"]["channel_id"], body["post"]["message"]), status=201)

    async def _channel_posts(self, request: web.Request) -> web.Response:
        since = int(request.query.get("since") or 0)
        channel = request.match_info["channel_id"]
        found = [p for p in self.posts.values() if p["channel_id"] == channel and p["update_at"] > since]
        return web.json_response(_post_list(found))

    async def _thread(self, request: web.Request) -> web.Response:
        root = request.match_info["post_id"]
        return web.json_response(_post_list([p for p in self.posts.values() if root in (p["id"], p["root_id"])]))

    async def _patch_post(self, request: web.Request) -> web.Response:
        post_id, patch = request.match_info["post_id"], await request.json()
        if post_id not in self.posts:
            return mm_error(404, "app.post.get.app_error", "Unable to get the post.")
        if len(patch.get("message") or "") > TEXT_LIMIT:
            return mm_error(400, "model.post.is_valid.msg.app_error", "Invalid Message")
        self.posts[post_id] = {**self.posts[post_id], **patch, "edit_at": 1}
        if "message" in patch:
            self.edits.append((post_id, patch["message"]))
        await self._waiter.notify()
        return web.json_response(self.posts[post_id])

    async def _delete_post(self, request: web.Request) -> web.Response:
        self.deleted.append(request.match_info["post_id"])
        await self._waiter.notify()
        return web.json_response({"status": "OK"})

    async def _upload(self, request: web.Request) -> web.Response:
        channel_id, infos = "", []
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            assert isinstance(part, aiohttp.BodyPartReader)
            if part.name == "channel_id":
                channel_id = (await part.read()).decode()
            elif part.name == "files":
                content = await part.read()
                mime = part.headers.get("Content-Type", "application/octet-stream")
                infos.append(self._file_info(bytes(content), part.filename or "file", mime, channel_id, self.bot_id))
        await self._waiter.notify()
        return web.json_response({"file_infos": infos, "client_ids": []}, status=201)

    def _file_info(self, content: bytes, name: str, mime: str, channel_id: str, user_id: str) -> dict[str, Any]:
        file_id = new_id()
        self.uploads[file_id] = (content, name, mime)
        return self._info_of(file_id) | {"channel_id": channel_id, "user_id": user_id}

    def _info_of(self, file_id: str) -> dict[str, Any]:
        content, name, mime = self.uploads[file_id]
        extension = name.rpartition(".")[2] if "." in name else ""
        return {"id": file_id, "name": name, "extension": extension, "size": len(content), "mime_type": mime}

    async def _download(self, request: web.Request) -> web.Response:
        content, _, mime = self.uploads[request.match_info["file_id"]]
        return web.Response(body=content, content_type=mime)

    async def _react(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.reactions.append((body["post_id"], body["emoji_name"], True))
        await self._waiter.notify()
        return web.json_response({**body, "create_at": 0}, status=201)

    async def _unreact(self, request: web.Request) -> web.Response:
        self.reactions.append((request.match_info["post_id"], request.match_info["emoji"], False))
        await self._waiter.notify()
        return web.json_response({"status": "OK"})

    async def _add_command(self, request: web.Request) -> web.Response:
        command = {**await request.json(), "id": new_id(), "token": new_id(), "creator_id": self.bot_id}
        self.commands[command["id"]] = command
        await self._waiter.notify()
        return web.json_response(command, status=201)

    async def _list_commands(self, request: web.Request) -> web.Response:
        team = request.query.get("team_id")
        return web.json_response([c for c in self.commands.values() if c["team_id"] == team])

    async def _delete_command(self, request: web.Request) -> web.Response:
        self.commands.pop(request.match_info["command_id"], None)
        return web.json_response({"status": "OK"})

    # The WebSocket.

    async def _websocket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        first = await socket.receive()
        challenge = json.loads(first.data) if first.type == WSMsgType.TEXT else {}
        if challenge.get("action") != "authentication_challenge" or challenge["data"].get("token") != self.token:
            await socket.close(code=1008)
            return socket
        await socket.send_json({"status": "OK", "seq_reply": challenge["seq"]})
        self._sockets.add(socket)
        self.connections += 1
        sequence = itertools.count()
        hello = {"server_version": VERSION, "connection_id": new_id()}
        await socket.send_json({"event": "hello", "data": hello, "broadcast": {}, "seq": next(sequence)})
        await self._waiter.notify()
        sender = asyncio.create_task(self._forward(socket, sequence))
        try:
            async for frame in socket:
                if frame.type == WSMsgType.TEXT:
                    await self._on_action(socket, json.loads(frame.data))
        finally:
            sender.cancel()
            self._sockets.discard(socket)
        return socket

    async def _forward(self, socket: web.WebSocketResponse, sequence: itertools.count[int]) -> None:
        while not socket.closed:
            event = await self._outbox.get()
            try:
                await socket.send_json({**event, "seq": next(sequence)})
            except ConnectionError:
                self._outbox.put_nowait(event)
                return

    async def _on_action(self, socket: web.WebSocketResponse, action: dict[str, Any]) -> None:
        if action.get("action") == "user_typing":
            data = action.get("data") or {}
            self.typing.append((data.get("channel_id", ""), data.get("parent_id", "")))
            await self._waiter.notify()
        await socket.send_json({"status": "OK", "seq_reply": action.get("seq")})


def _post_list(posts: list[dict[str, Any]]) -> dict[str, Any]:
    """A `PostList`: ids newest first in `order`, the posts by id."""
    ordered = sorted(posts, key=lambda p: p["create_at"], reverse=True)
    return {"order": [p["id"] for p in ordered], "posts": {p["id"]: p for p in ordered}}
