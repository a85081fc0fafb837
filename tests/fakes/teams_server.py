"""A fake Microsoft Teams on 127.0.0.1: the Bot Connector service (the serviceUrl's `/v3/conversations/…`) and
its sign-in side (`teams_issuer.FakeIssuer`); users' activities are POSTed to the bot's webhook with a signed JWT.

Wire facts, from the Bot Connector REST reference, Teams' bot docs (conversation basics, "Send and receive
files", Adaptive Card actions) and the Agents SDK's connector_client.py (1.9.0):

- Every Connector call carries the bot's `Authorization: Bearer <token>` (401 without it).
- `POST /v3/conversations/{conversationId}/activities` with an Activity (camelCase JSON: `type: "message"`,
  `text`, `textFormat: "markdown"`, `attachments`, `replyToId`) → 201 `{"id"}`. `PUT
  /v3/conversations/{id}/activities/{activityId}` replaces one → 200 `{"id"}`; `DELETE` removes it → 200.
  Errors are `{"error": {"code", "message"}}`: 403 `BotNotInConversationRoster`, 429 with `Retry-After`
  seconds, 5xx `ServiceError`. A channel thread's conversation id is `19:…@thread.tacv2;messageid=<root id>`.
- An inbound activity: `{"type": "message", "id", "timestamp", "serviceUrl", "channelId": "msteams", "from":
  {"id": "29:…", "name", "aadObjectId"}, "conversation": {"id", "conversationType": "personal" | "channel" |
  "groupChat", "tenantId"}, "recipient": {"id": "28:<app id>", "name"}, "text", "textFormat": "plain",
  "entities": [{"type": "mention", "mentioned": {"id", "name"}, "text": "<at>name</at>"}], "channelData":
  {"tenant": {"id"}, "team"?: {"id"}, "channel"?: {"id"}}}`. A channel message names the bot as `<at>…</at>`
  in `text`. An Action.Submit press is a message with the button's `data` as `value` and `replyToId` the
  card's activity. A file in a personal chat is an attachment `{"contentType":
  "application/vnd.microsoft.teams.file.download.info", "name", "content": {"downloadUrl", "uniqueId",
  "fileType"}}` whose downloadUrl needs no token.
- The bot's file in a personal chat: a `application/vnd.microsoft.teams.card.file.consent` attachment (`name`,
  `content: {"description", "sizeInBytes", "acceptContext", "declineContext"}`). Allow sends an `invoke` named
  `fileConsent/invoke` with `value: {"type": "fileUpload", "action": "accept", "context", "uploadInfo":
  {"contentUrl", "name", "uploadUrl", "uniqueId", "fileType"}}`; the bot PUTs the bytes to uploadUrl (with
  `Content-Range`) and answers the invoke with 200.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.teams_issuer import FakeIssuer
from tests.fakes.waiting import RecordWaiter
from tests.fakes.webhook_pusher import WebhookPusher

APP_ID = "00000000-0000-0000-0000-0000000000b0"
BOT_NAME = "Relay"
TEAM = "19:team-general@thread.tacv2"
CHANNEL_CONVERSATION = "19:general@thread.tacv2"
CONSENT_CARD = "application/vnd.microsoft.teams.card.file.consent"


def connector_error(status: int, code: str, message: str, retry_after: float | None = None) -> web.Response:
    """An error answer as the Connector shapes it."""
    headers = {"Retry-After": str(int(retry_after))} if retry_after is not None else None
    return web.json_response({"error": {"code": code, "message": message}}, status=status, headers=headers)


class FakeTeams(WebhookPusher):
    """One tenant with the bot installed: users write with `personal`/`channel_message`; `sent` is what it posted."""

    def __init__(self, app_password: str = "s3cret-value") -> None:
        super().__init__()
        self.issuer = FakeIssuer(APP_ID, app_password)
        self.sent: list[dict[str, Any]] = []  # activities the bot created, with "_id" and "_conversation"
        self.updates: list[tuple[str, dict[str, Any]]] = []  # (activity id, new activity)
        self.uploads: list[tuple[str, bytes]] = []  # (file name, bytes) PUT to an upload URL
        self.answers: list[int] = []  # the bot's status for each activity POSTed to it
        self.attempts = 0
        self.failures: deque[web.Response] = deque()
        self.files: dict[str, bytes] = {}
        self.accept_files = True  # the user presses Allow on each consent card
        self._ids = itertools.count(1)
        self._waiter = RecordWaiter()

    @property
    def service_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/teams/"

    @property
    def bot_id(self) -> str:
        return f"28:{APP_ID}"

    def routes(self, app: web.Application) -> None:
        app.router.add_routes(self.issuer.routes())
        app.router.add_post("/teams/v3/conversations/{cid}/activities", self._create)
        app.router.add_put("/teams/v3/conversations/{cid}/activities/{aid}", self._update)
        app.router.add_delete("/teams/v3/conversations/{cid}/activities/{aid}", self._delete)
        app.router.add_put("/upload/{name}", self._upload)
        app.router.add_get("/files/{name}", self._download)
        app.router.add_get("/teams/v3/attachments/{name}/views/original", self._attachment)

    async def __aenter__(self) -> FakeTeams:
        await super().__aenter__()
        self.issuer.base = f"http://127.0.0.1:{self.port}"
        return self

    def section(self) -> dict[str, Any]:
        """The `channels.teams` keys pointing the channel at this fake."""
        return {
            "app_id": APP_ID,
            "app_password": self.issuer.app_password,
            "openid_metadata": self.issuer.metadata_url,
            "token_url": self.issuer.token_url,
            "service_url": self.service_url,
        }

    # What users do.

    def activity(self, conversation: dict[str, Any], user: str, text: str, **extra: Any) -> dict[str, Any]:
        """A message activity from `user` in `conversation`, as the Connector posts it."""
        return {
            "type": "message",
            "id": f"{next(self._ids) + 1000}",
            "timestamp": "2026-12-06T23:00:00.000Z",
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": {"id": user, "name": f"User {user[-4:]}", "aadObjectId": f"aad-{user}"},
            "conversation": conversation,
            "recipient": {"id": self.bot_id, "name": BOT_NAME},
            "text": text,
            "textFormat": "plain",
            "channelData": {"tenant": {"id": "tenant-1"}},
            **extra,
        }

    def personal(self, text: str, user: str, **extra: Any) -> dict[str, Any]:
        """`user` writes in their personal chat with the bot; queued for delivery."""
        conversation = {"id": f"a:personal-{user}", "conversationType": "personal", "tenantId": "tenant-1"}
        activity = self.activity(conversation, user, text, **extra)
        self.push(activity)
        return activity

    def channel_message(self, text: str, user: str, mention: bool) -> dict[str, Any]:
        """`user` posts in the team's General channel, @mentioning the bot or not; queued for delivery."""
        conversation = {"id": CHANNEL_CONVERSATION, "conversationType": "channel", "isGroup": True}
        entities = []
        if mention:
            text = f"<at>{BOT_NAME}</at> {text}"
            entities = [
                {"type": "mention", "mentioned": {"id": self.bot_id, "name": BOT_NAME}, "text": f"<at>{BOT_NAME}</at>"}
            ]
        activity = self.activity(conversation, user, text, entities=entities)
        team = {"id": TEAM}
        activity["channelData"] = {"tenant": {"id": "tenant-1"}, "team": team, "channel": {"id": CHANNEL_CONVERSATION}}
        self.push(activity)
        return activity

    def personal_file(self, content: bytes, name: str, user: str) -> dict[str, Any]:
        """`user` sends a file in their personal chat: stored, then offered by its download URL."""
        self.files[name] = content
        attachment = {
            "contentType": "application/vnd.microsoft.teams.file.download.info",
            "name": name,
            "content": {
                "downloadUrl": f"http://127.0.0.1:{self.port}/files/{name}",
                "uniqueId": f"file-{next(self._ids)}",
                "fileType": name.rpartition(".")[2],
            },
        }
        return self.personal("", user, attachments=[attachment])

    def personal_image(self, content: bytes, user: str, host: str = "") -> dict[str, Any]:
        """`user` pastes an image in their personal chat: served by the Connector (bot token) at `host` or its own."""
        self.files["pasted.png"] = content
        base = host or f"http://127.0.0.1:{self.port}"
        url = f"{base}/teams/v3/attachments/pasted.png/views/original"
        return self.personal("", user, attachments=[{"contentType": "image/png", "contentUrl": url}])

    def press(self, sent: dict[str, Any], label: str, user: str) -> dict[str, Any]:
        """`user` presses the Action.Submit button `label` of a card the bot sent; queued for delivery."""
        card = sent["attachments"][0]["content"]
        data = next(action["data"] for action in card["actions"] if action["title"] == label)
        conversation = {"id": sent["_conversation"], "conversationType": "personal", "tenantId": "tenant-1"}
        activity = self.activity(conversation, user, "", value=data, replyToId=sent["_id"])
        self.push(activity)
        return activity

    async def deliver(self, activity: dict[str, Any], token: str | None = "valid") -> int:
        """POST an activity to the bot with a signed token (or `token` as given, or none); returns its status."""
        headers = {"Content-Type": "application/json"}
        if token == "valid":
            token = self.issuer.sign(activity["serviceUrl"])
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        async with aiohttp.ClientSession() as http, http.post(self.webhook_url, json=activity, headers=headers) as r:
            self.answers.append(r.status)
        await self._waiter.notify()
        return r.status

    async def wait_for_sent(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        await self._waiter.wait_until(lambda: len(self.sent) >= count, timeout, lambda: f"{len(self.sent)} sent")
        return self.sent

    async def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        await self._waiter.wait_until(check, timeout, lambda: f"not yet {what}")

    # The Connector.

    async def _create(self, request: web.Request) -> web.Response:
        if not self.issuer.granted_token(request.headers.get("Authorization")):
            return connector_error(401, "Unauthorized", "Authorization has been denied for this request.")
        body = await request.json()
        self.attempts += 1
        await self._waiter.notify()
        if self.failures:
            return self.failures.popleft()
        if body.get("type") != "message" or not (body.get("text") or body.get("attachments")):
            return connector_error(400, "BadSyntax", "Incorrect conversation creation parameters")
        activity_id = f"1{next(self._ids):012d}"
        self.sent.append({**body, "_id": activity_id, "_conversation": request.match_info["cid"]})
        await self._waiter.notify()
        for attachment in body.get("attachments") or []:
            if attachment.get("contentType") == CONSENT_CARD and self.accept_files:
                self.push(self._consent(attachment, request.match_info["cid"]))
        return web.json_response({"id": activity_id}, status=201)

    def _consent(self, card: dict[str, Any], conversation_id: str) -> dict[str, Any]:
        """The invoke Teams sends when the user presses Allow on a consent card."""
        name = card["name"]
        upload = {
            "contentUrl": f"https://contoso.sharepoint.com/personal/u/Documents/Applications/{name}",
            "name": name,
            "uploadUrl": f"http://127.0.0.1:{self.port}/upload/{name}",
            "uniqueId": f"drive-item-{next(self._ids)}",
            "fileType": name.rpartition(".")[2],
        }
        value = {
            "type": "fileUpload",
            "action": "accept",
            "context": card["content"]["acceptContext"],
            "uploadInfo": upload,
        }
        conversation = {"id": conversation_id, "conversationType": "personal", "tenantId": "tenant-1"}
        user = conversation_id.removeprefix("a:personal-")
        return {**self.activity(conversation, user, ""), "type": "invoke", "name": "fileConsent/invoke", "value": value}

    async def _update(self, request: web.Request) -> web.Response:
        if not self.issuer.granted_token(request.headers.get("Authorization")):
            return connector_error(401, "Unauthorized", "Authorization has been denied for this request.")
        activity_id = request.match_info["aid"]
        if activity_id not in {sent["_id"] for sent in self.sent}:
            return connector_error(404, "ActivityNotFoundInConversation", "The activity was not found")
        self.updates.append((activity_id, await request.json()))
        await self._waiter.notify()
        return web.json_response({"id": activity_id})

    async def _delete(self, request: web.Request) -> web.Response:
        if not self.issuer.granted_token(request.headers.get("Authorization")):
            return connector_error(401, "Unauthorized", "Authorization has been denied for this request.")
        return web.json_response({})

    async def _upload(self, request: web.Request) -> web.Response:
        self.uploads.append((request.match_info["name"], await request.read()))
        await self._waiter.notify()
        return web.json_response({"id": "drive-item", "name": request.match_info["name"]}, status=201)

    async def _attachment(self, request: web.Request) -> web.Response:
        if not self.issuer.granted_token(request.headers.get("Authorization")):
            return connector_error(401, "Unauthorized", "Authorization has been denied for this request.")
        return web.Response(body=self.files[request.match_info["name"]], content_type="image/png")

    async def _download(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return web.Response(body=self.files[name]) if name in self.files else web.Response(status=404)
