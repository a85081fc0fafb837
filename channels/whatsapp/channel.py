"""WhatsApp Business Cloud API: a signed webhook on the gateway's HTTP server in, Graph API calls out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar
from urllib.parse import urlsplit

from aiohttp import web

from bot.bus import ChatRef, InboundMessage, OutboundMessage, Quote
from bot.cancelling import cancel_and_wait
from bot.config.channels.whatsapp import WhatsAppConfig
from bot.errors import BusClosed, ChannelError
from bot.retry import RetryPolicy
from bot.storage.recent import RecentMap
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.dedupe import RECENT_DELIVERIES, SeenIds
from channels.media import MediaRef, attach_media, download_capped
from channels.whatsapp.calls import GraphApi
from channels.whatsapp.parse import CHANNEL, Incoming, MalformedEvent, Status, handshake, parse_webhook, signature_ok
from channels.whatsapp.send import WhatsAppSender

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

REACTIONS: dict[ReactionStatus, str] = {"seen": "👀", "done": "👍", "failed": "👎"}
TEXTS_KEPT = 2048  # recent messages whose text a quote of them can show
MALFORMED_KINDS = 64  # distinct reasons remembered, so each is a warning only once
MEDIA_HOSTS = (".fbsbx.com", ".facebook.com", ".fbcdn.net", ".whatsapp.net")


class WhatsAppChannel(Channel):
    """Answers the webhook at `webhook_path` (mounted by the gateway) and sends through the Graph API."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self, publish: Publish, config: WhatsAppConfig, media_dir: Path, retry: RetryPolicy | None = None
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._http: aiohttp.ClientSession | None = None
        self._graph: GraphApi | None = None
        self._sender: WhatsAppSender | None = None
        self._seen = SeenIds(RECENT_DELIVERIES)
        self._texts: RecentMap[str, tuple[str, bool, str | None]] = RecentMap(TEXTS_KEPT)  # id -> text, bot?, author
        self._latest: RecentMap[str, str] = RecentMap(TEXTS_KEPT)  # chat -> the user's latest message id
        self._malformed: set[str] = set()
        self._receipts: set[asyncio.Task[None]] = set()

    def webhook_routes(self) -> Sequence[web.RouteDef]:
        """The GET verification handshake and the signed POST of events, at `webhook_path`."""
        path = self._config.webhook_path
        return [web.get(path, self._verify), web.post(path, self._receive)]

    async def start(self) -> None:
        import aiohttp

        config = self._config
        token = config.access_token.get_secret_value()
        if not config.phone_number_id or not token or not config.app_secret.get_secret_value():
            raise ChannelError("channels.whatsapp needs phone_number_id, access_token, app_secret and verify_token")
        http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        graph = GraphApi(http, config.api_base, config.phone_number_id, token)
        try:
            number = await graph.phone_number()
        except BaseException:
            await http.close()
            raise
        self._http, self._graph = http, graph
        self._sender = WhatsAppSender(graph, self._retry, config.template, self._remember_sent)
        logger.info("whatsapp: sending as %s", number.get("display_phone_number") or config.phone_number_id)

    async def stop(self) -> None:
        await cancel_and_wait(*self._receipts)
        http, self._http = self._http, None
        self._graph = self._sender = None
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        if self._sender is None:
            raise ChannelError("whatsapp is not started")
        await self._sender.send(message)

    async def show_typing(self, chat: ChatRef) -> None:
        """Show "typing…" under the user's latest message for up to 25 s or until the reply (it marks it read too)."""
        latest = self._latest.get(chat.chat_id)
        if self._graph is None or latest is None:
            return
        payload = {"status": "read", "message_id": latest, "typing_indicator": {"type": "text"}}
        try:
            await self._graph.message(payload)
        except ChannelError as exc:
            logger.debug("[%s] read receipt failed: %s", chat.session_key, exc)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """Mark a user's message 👀 (seen), 👍 (done) or 👎 (failed); a new reaction replaces the bot's last one."""
        if self._graph is None or not message_id.startswith("wamid."):
            return  # not started, or not one of the user's messages
        payload = {
            "to": chat.chat_id,
            "type": "reaction",
            "reaction": {"message_id": message_id, "emoji": REACTIONS[status]},
        }
        try:
            await self._graph.message(payload)
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)

    async def _verify(self, request: web.Request) -> web.Response:
        """Meta's subscription check: echo `hub.challenge` when `hub.verify_token` matches."""
        challenge = handshake(request.query, self._config.verify_token.get_secret_value())
        if challenge is None:
            logger.warning("whatsapp: webhook verification refused (wrong verify_token?)")
            return web.Response(status=403, text="verification failed")
        return web.Response(text=challenge, content_type="text/plain")

    async def _receive(self, request: web.Request) -> web.Response:
        """A POST of events: signature first, then each new message (files downloaded) journaled, then the 200."""
        body = await request.read()
        if not signature_ok(
            self._config.app_secret.get_secret_value(), body, request.headers.get("X-Hub-Signature-256")
        ):
            logger.warning("whatsapp: refused a webhook POST from %s with a missing or wrong signature", request.remote)
            return web.Response(status=401, text="bad signature")
        if self._graph is None:
            return web.Response(status=503, text="starting")  # Meta delivers it again later
        try:
            messages, statuses = parse_webhook(body, self._config.phone_number_id)
        except MalformedEvent as exc:
            self._log_malformed(str(exc))
            return web.Response(text="ignored")  # a 200: redelivering it would not make it readable
        for status in statuses:
            self._log_status(status)
        try:
            for incoming in messages:
                await self._take(incoming)
        except BusClosed:
            return web.Response(status=503, text="stopping")
        return web.Response(text="ok")

    async def _take(self, incoming: Incoming) -> None:
        """Publish one message, its files downloaded first, before the webhook is answered: a crash before the 200
        means Meta delivers it again. Its id counts as seen only once it is published."""
        message = incoming.message
        message_id = message.platform_message_id or ""
        if message_id in self._seen:
            logger.info("[%s] duplicate delivery of %s dropped", message.chat.session_key, message_id)
            return
        self._remember(message_id, message.text, False, message.sender_name)
        self._latest[message.chat.chat_id] = message_id
        message = self._quoted(message)
        if incoming.media:
            message = await attach_media(message, incoming.media, self._media_dir, self._fetch)
        await self._publish(message)
        self._seen.add(message_id)
        receipt = asyncio.create_task(self._mark_read(message.chat, message_id), name=f"whatsapp-read:{message_id}")
        self._receipts.add(receipt)
        receipt.add_done_callback(self._receipts.discard)

    async def _mark_read(self, chat: ChatRef, message_id: str) -> None:
        """The read receipt (blue ticks) for a message the inbox has; sent after the webhook's answer."""
        if self._graph is None:
            return
        try:
            await self._graph.message({"status": "read", "message_id": message_id})
        except ChannelError as exc:
            logger.debug("[%s] read receipt for %s failed: %s", chat.session_key, message_id, exc)

    async def _fetch(self, media: MediaRef, target: Path) -> None:
        """GET /{media_id} for a short-lived URL, then the bytes with the token (only to Meta's or api_base's hosts)."""
        assert self._graph is not None and self._http is not None
        url = str((await self._graph.media_url(media.source))["url"])
        host = urlsplit(url).hostname or ""
        if host != urlsplit(self._config.api_base).hostname and not host.endswith(MEDIA_HOSTS):
            raise ChannelError(f"not sending the access token to {host}")
        await download_capped(self._http, url, target, self._graph.auth)

    def _quoted(self, message: InboundMessage) -> InboundMessage:
        """A reply's quote with the quoted message's text, when it is one this channel still remembers."""
        quote = message.reply_to
        if quote is None or quote.platform_message_id is None:
            return message
        text, from_bot, author = self._texts.get(quote.platform_message_id, ("[an earlier message]", False, None))
        author_id = None if from_bot else message.sender_id
        quote = Quote(text[:1000], author_id, author, from_bot, platform_message_id=quote.platform_message_id)
        return replace(message, reply_to=quote)

    def _remember_sent(self, message_id: str, text: str) -> None:
        self._remember(message_id, text, True, None)

    def _remember(self, message_id: str, text: str, from_bot: bool, author: str | None) -> None:
        self._texts[message_id] = (text, from_bot, author)

    def _log_malformed(self, reason: str) -> None:
        """The first body malformed in a way is a warning; the same way again only a debug line."""
        level = logging.DEBUG if reason in self._malformed else logging.WARNING
        if len(self._malformed) < MALFORMED_KINDS:
            self._malformed.add(reason)
        logger.log(level, "whatsapp: dropped a malformed webhook body: %s", reason)

    @staticmethod
    def _log_status(status: Status) -> None:
        if status.status == "failed":
            codes = ", ".join(map(str, status.error_codes)) or "no code"
            logger.warning("whatsapp: message %s to %s failed (%s)", status.message_id, status.recipient, codes)
