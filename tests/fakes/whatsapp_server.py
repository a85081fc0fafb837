"""A fake WhatsApp Cloud API (Graph API on aiohttp, 127.0.0.1) that also signs and POSTs webhooks to the bot.

The wire format it speaks, checked against Meta's Cloud API reference and pywa 4.5's models:

- Point the channel with `api_base: http://127.0.0.1:P/v21.0`; every call carries `Authorization: Bearer
  <token>`, and a wrong token is `401 {"error": {"message", "type": "OAuthException", "code": 190,
  "fbtrace_id"}}`. Errors share that shape: 400 code 100 (bad parameter, an unknown node), 131009 (a value
  out of range: text over 4,096 characters, more than 3 buttons or a title over 20, more than 10 list rows
  or a row title over 24, an interactive body over 1,024), 131047 (outside the 24-hour window: only
  `type: "template"` goes). `failures` queues any other answer for the next message send, e.g. 400 code
  131056 (pair rate limit, no Retry-After), 500 code 131000, 400 code 131026 (undeliverable).
- `GET /v21.0/{phone_number_id}` → `{"id", "display_phone_number", "verified_name"}` (what doctor asks).
- `POST /v21.0/{phone_number_id}/messages`, JSON with `messaging_product: "whatsapp"`, `to` (wa_id), `type`
  (`text` `{"body", "preview_url"}`, `image|document|audio|video` `{"id", "caption"?, "filename"?}`,
  `interactive` `{"type": "button"|"list", "body": {"text"}, "action": …}`, `template`, `reaction`
  `{"message_id", "emoji"}`; `"emoji": ""` takes a reaction back) and `context: {"message_id"}` to quote →
  `{"messaging_product", "contacts": [{"input", "wa_id"}], "messages": [{"id": "wamid.…"}]}`. A read receipt
  is `{"messaging_product", "status": "read", "message_id", "typing_indicator"?: {"type": "text"}}` →
  `{"success": true}`.
- `POST /v21.0/{phone_number_id}/media`, multipart `file`, `type`, `messaging_product` → `{"id"}`;
  `GET /v21.0/{media_id}` → `{"url", "mime_type", "sha256", "file_size", "id"}`; the `url` answers only with
  the same Bearer header.
- Webhooks: POST of `{"object": "whatsapp_business_account", "entry": [{"id", "changes": [{"field":
  "messages", "value": {"messaging_product", "metadata": {"display_phone_number", "phone_number_id"},
  "contacts": [{"profile": {"name"}, "wa_id"}], "messages": [{"from", "id", "timestamp", "type", <type>: …,
  "context"?: {"from", "id"}}]}}]}]}`, signed `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(app secret, raw
  body)>`. A tap arrives as `type: "interactive"` with `button_reply {id, title}` or `list_reply {id, title}`
  and the tapped message's id in `context`. Meta delivers a body again until it gets a 200.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import aiohttp
from aiohttp import web

from tests.fakes.waiting import RecordWaiter
from tests.fakes.webhook_pusher import WebhookPusher

VERSION = "v21.0"
TEXT_LIMIT = 4096


def graph_error(status: int, code: int, message: str) -> web.Response:
    """An error answer as the Graph API shapes it."""
    error = {"message": message, "type": "OAuthException", "code": code, "fbtrace_id": "Afake"}
    return web.json_response({"error": error}, status=status)


class FakeWhatsApp(WebhookPusher):
    """One business phone number: push user messages with `text`/`image`/`press`, read `sent` and `reads`."""

    def __init__(self, phone_number_id: str = "1055", token: str = "EAAtest", app_secret: str = "s3cret") -> None:
        super().__init__()
        self.phone_number_id, self.token, self.app_secret = phone_number_id, token, app_secret
        self.sent: list[dict[str, Any]] = []  # accepted POST /messages bodies, reads and reactions excluded
        self.reads: list[dict[str, Any]] = []
        self.reactions: list[tuple[str, str]] = []  # (the user's message id, emoji; "" takes it back), in order
        self.attempts = 0  # POST /messages that would create a message, refused or not
        self.uploads: dict[str, tuple[bytes, str, str]] = {}  # media id -> bytes, mime type, file name
        self.closed_windows: set[str] = set()  # wa_ids whose 24-hour window has passed
        self.failures: deque[web.Response] = deque()  # answers for the next POST /messages calls
        self.answers: list[int] = []  # the bot's HTTP status for each webhook POST
        self._ids = itertools.count(1)
        self._waiter = RecordWaiter()

    @property
    def api_base(self) -> str:
        """The `api_base` to configure."""
        return f"http://127.0.0.1:{self.port}/{VERSION}"

    def routes(self, app: web.Application) -> None:
        app.router.add_get(f"/{VERSION}/{{node}}", self._get_node)
        app.router.add_post(f"/{VERSION}/{{phone}}/messages", self._post_message)
        app.router.add_post(f"/{VERSION}/{{phone}}/media", self._upload)
        app.router.add_get("/media-bytes/{media_id}", self._download)

    # What a user does: each builds the webhook body, signs it and POSTs it to the bot.

    def message_payload(self, message: dict[str, Any], name: str = "Ann") -> dict[str, Any]:
        """The webhook body carrying one user message, as Meta sends it."""
        value = {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "15550001055", "phone_number_id": self.phone_number_id},
            "contacts": [{"profile": {"name": name}, "wa_id": message["from"]}],
            "messages": [message],
        }
        return {
            "object": "whatsapp_business_account",
            "entry": [{"id": "WABA1", "changes": [{"field": "messages", "value": value}]}],
        }

    def new_message(self, sender: str, kind: str, part: dict[str, Any], context: str | None = None) -> dict[str, Any]:
        """One `messages[]` entry with a fresh wamid."""
        message = {"from": sender, "id": f"wamid.in{next(self._ids)}", "timestamp": str(int(time.time())), "type": kind}
        message[kind] = part
        if context:
            message["context"] = {"from": "15550001055", "id": context}
        return message

    async def text(self, body: str, sender: str = "4915100000001", context: str | None = None) -> dict[str, Any]:
        """A user's text message, delivered; returns the message entry."""
        message = self.new_message(sender, "text", {"body": body}, context)
        await self.deliver(self.message_payload(message))
        return message

    async def image(self, data: bytes, caption: str = "", sender: str = "4915100000001") -> dict[str, Any]:
        """A user's photo: stored in the media store, then delivered by id."""
        media_id = f"in-media-{next(self._ids)}"
        self.uploads[media_id] = (data, "image/jpeg", "photo.jpg")
        digest = hashlib.sha256(data).hexdigest()
        part = {"id": media_id, "mime_type": "image/jpeg", "sha256": digest, "caption": caption}
        message = self.new_message(sender, "image", part)
        await self.deliver(self.message_payload(message))
        return message

    def document(self, data: bytes, filename: str, mime_type: str, sender: str = "4915100000001") -> dict[str, Any]:
        """A user's file: stored in the media store, then queued for delivery by id; returns the message entry."""
        media_id = f"in-media-{next(self._ids)}"
        self.uploads[media_id] = (data, mime_type, filename)
        part = {
            "id": media_id,
            "mime_type": mime_type,
            "sha256": hashlib.sha256(data).hexdigest(),
            "filename": filename,
        }
        message = self.new_message(sender, "document", part)
        self.push(self.message_payload(message))
        return message

    async def press(self, sent: dict[str, Any], index: int, sender: str = "4915100000001") -> dict[str, Any]:
        """A user's tap on button (or list row) `index` of an interactive message the bot sent, delivered."""
        message = self.tap(sent, index, sender)
        await self.deliver(self.message_payload(message))
        return message

    def tap(self, sent: dict[str, Any], index: int, sender: str = "4915100000001") -> dict[str, Any]:
        """The `messages[]` entry of a tap on button (or list row) `index` of an interactive message the bot sent."""
        interactive = sent["interactive"]
        if interactive["type"] == "button":
            reply = interactive["action"]["buttons"][index]["reply"]
            part = {"type": "button_reply", "button_reply": reply}
        else:
            row = interactive["action"]["sections"][0]["rows"][index]
            part = {"type": "list_reply", "list_reply": {"id": row["id"], "title": row["title"]}}
        return self.new_message(sender, "interactive", part, context=sent["_id"])

    def push_text(self, body: str, sender: str = "4915100000001") -> dict[str, Any]:
        """A user's text message, queued for delivery in order without waiting; returns the message entry."""
        message = self.new_message(sender, "text", {"body": body})
        self.push(self.message_payload(message))
        return message

    async def deliver(self, payload: dict[str, Any] | bytes, signature: str | None = "valid") -> int:
        """POST a webhook body to the bot, signed unless `signature` is None or given; returns its status."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = {"Content-Type": "application/json"}
        if signature == "valid":
            signature = "sha256=" + hmac.new(self.app_secret.encode(), body, hashlib.sha256).hexdigest()
        if signature is not None:
            headers["X-Hub-Signature-256"] = signature
        async with aiohttp.ClientSession() as session, session.post(self.webhook_url, data=body, headers=headers) as r:
            self.answers.append(r.status)
            return r.status

    async def wait_for_sent(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Wait until the bot has sent `count` messages; return them all."""
        await self._waiter.wait_until(lambda: len(self.sent) >= count, timeout, lambda: f"{len(self.sent)} sent")
        return self.sent

    async def wait_until(self, check: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
        """Wait until `check()` holds, re-checked whenever the fake records a call."""
        await self._waiter.wait_until(check, timeout, lambda: f"not yet {what}")

    async def wait_for_reads(self, count: int, timeout: float = 10.0) -> None:
        """Wait until the bot has marked `count` messages read."""
        await self._waiter.wait_until(lambda: len(self.reads) >= count, timeout, lambda: f"{len(self.reads)} reads")

    # The Graph API.

    def _authorised(self, request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bearer {self.token}"

    async def _get_node(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return graph_error(401, 190, "Invalid OAuth access token - Cannot parse access token")
        node = request.match_info["node"]
        if node == self.phone_number_id:
            return web.json_response({"id": node, "display_phone_number": "+1 555-000-1055", "verified_name": "Relay"})
        if node in self.uploads:
            data, mime, _ = self.uploads[node]
            url = f"http://127.0.0.1:{self.port}/media-bytes/{node}"
            digest = hashlib.sha256(data).hexdigest()
            return web.json_response(
                {"url": url, "mime_type": mime, "sha256": digest, "file_size": len(data), "id": node}
            )
        return graph_error(400, 100, f"Unsupported get request. Object with ID '{node}' does not exist")

    async def _download(self, request: web.Request) -> web.StreamResponse:
        if not self._authorised(request):
            return web.Response(status=401)
        data, mime, _ = self.uploads[request.match_info["media_id"]]
        return web.Response(body=data, content_type=mime)

    async def _upload(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return graph_error(401, 190, "Invalid OAuth access token")
        form = await request.post()
        file = form["file"]
        if form.get("messaging_product") != "whatsapp" or not isinstance(file, web.FileField):
            return graph_error(400, 100, "(#100) The parameter messaging_product is required.")
        media_id = f"out-media-{next(self._ids)}"
        self.uploads[media_id] = (file.file.read(), str(form.get("type")), file.filename)
        return web.json_response({"id": media_id})

    async def _post_message(self, request: web.Request) -> web.Response:
        if not self._authorised(request):
            return graph_error(401, 190, "Invalid OAuth access token")
        body = await request.json()
        if request.match_info["phone"] != self.phone_number_id or body.get("messaging_product") != "whatsapp":
            return graph_error(400, 100, "(#100) Invalid parameter")
        if body.get("status") == "read":
            self.reads.append(body)
            await self._waiter.notify()
            return web.json_response({"success": True})
        if body.get("type") == "reaction":
            self.reactions.append((body["reaction"]["message_id"], body["reaction"]["emoji"]))
            await self._waiter.notify()
            return web.json_response(
                {"messaging_product": "whatsapp", "messages": [{"id": f"wamid.r{next(self._ids)}"}]}
            )
        self.attempts += 1
        await self._waiter.notify()
        if self.failures:
            return self.failures.popleft()
        if problem := _invalid(body):
            return graph_error(400, 131009, f"(#131009) Parameter value is not valid: {problem}")
        if body["to"] in self.closed_windows and body["type"] != "template":
            return graph_error(400, 131047, "Re-engagement message")
        message_id = f"wamid.out{next(self._ids)}"
        self.sent.append({**body, "_id": message_id})
        await self._waiter.notify()
        return web.json_response(
            {
                "messaging_product": "whatsapp",
                "contacts": [{"input": body["to"], "wa_id": body["to"]}],
                "messages": [{"id": message_id}],
            }
        )


def _invalid(body: dict[str, Any]) -> str | None:
    """What real WhatsApp refuses in a send: over-long text, too many or too long buttons and rows."""
    kind = body.get("type")
    if not body.get("to") or kind not in ("text", "interactive", "image", "document", "audio", "video", "template"):
        return "to/type"
    if kind == "text" and not 0 < len(body["text"]["body"]) <= TEXT_LIMIT:
        return "text.body length"
    if kind == "interactive":
        interactive = body["interactive"]
        action = interactive["action"]
        if len(interactive["body"]["text"]) > 1024:
            return "interactive.body length"
        if interactive["type"] == "button":
            buttons = action["buttons"]
            if not 0 < len(buttons) <= 3 or any(len(b["reply"]["title"]) > 20 for b in buttons):
                return "buttons"
        elif interactive["type"] == "list":
            rows = [row for section in action["sections"] for row in section["rows"]]
            if len(action["button"]) > 20 or not 0 < len(rows) <= 10 or any(len(r["title"]) > 24 for r in rows):
                return "list rows"
    return None
