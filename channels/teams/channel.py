"""Microsoft Teams: the Bot Connector posts each activity to the webhook on the gateway's HTTP server, with a JWT
checked before anything else; replies go back through the Agents SDK's ConnectorClient."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from aiohttp import web

from bot.bus import ChatRef, OutboundMessage
from bot.config.channels.teams import TeamsConfig
from bot.errors import BusClosed, ChannelError
from bot.retry import RetryPolicy
from bot.storage.recent import RecentMap
from channels.base import Channel, Publish
from channels.dedupe import RECENT_DELIVERIES, SeenIds
from channels.live_edits import EditedMessages
from channels.media import MediaRef, attach_media, download_capped
from channels.streaming import LiveReply, StreamSettings
from channels.teams.auth import ConnectorTokens, Unauthorized
from channels.teams.calls import Connector
from channels.teams.credentials import BotCredentials
from channels.teams.files import FileOffers
from channels.teams.live import TeamsEdits
from channels.teams.parse import CHANNEL, Incoming, MalformedActivity, parse_activity
from channels.teams.send import MAX_MESSAGE_LENGTH, TeamsSender

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

CHATS_KEPT = 4096  # conversations whose serviceUrl is remembered


class TeamsChannel(Channel):
    """Answers the Connector's POSTs at `webhook_path` (mounted by the gateway) and replies through the Connector."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self, publish: Publish, config: TeamsConfig, media_dir: Path, retry: RetryPolicy | None = None
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._http: aiohttp.ClientSession | None = None
        self._tokens: ConnectorTokens | None = None
        self._credentials: BotCredentials | None = None
        self._connector: Connector | None = None
        self._sender: TeamsSender | None = None
        self._files: FileOffers | None = None
        self._services: RecentMap[str, str] = RecentMap(CHATS_KEPT)  # conversation id -> serviceUrl
        self._seen = SeenIds(RECENT_DELIVERIES)

    def webhook_routes(self) -> Sequence[web.RouteDef]:
        """The Connector's POST of activities, at `webhook_path`."""
        return [web.post(self._config.webhook_path, self._receive)]

    async def start(self) -> None:
        import aiohttp

        config = self._config
        secret = config.app_password.get_secret_value()
        if not config.app_id or not secret:
            raise ChannelError("channels.teams needs app_id and app_password")
        http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        credentials = BotCredentials(http, config.token_endpoint(), config.app_id, secret, config.token_scope)
        try:
            await credentials.token()
        except BaseException:
            await http.close()
            raise
        self._http, self._credentials = http, credentials
        self._tokens = ConnectorTokens(http, config.openid_metadata, config.app_id)
        self._connector = Connector(credentials)
        self._files = FileOffers(http, self._post)
        self._sender = TeamsSender(self._connector, self._service_of, self._retry, self._files.offer)
        logger.info("teams: app %s ready; the Connector posts to %s", config.app_id, config.webhook_path)

    async def stop(self) -> None:
        connector, self._connector = self._connector, None
        http, self._http = self._http, None
        self._sender = self._files = self._tokens = None
        if connector is not None:
            await connector.close()
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        if self._sender is None:
            raise ChannelError("teams is not started")
        await self._sender.send(message)

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """A reply posted once and replaced in place (PUT) as it grows; None when streaming is off."""
        if self._connector is None or self._streaming.mode == "off":
            return None
        edits = TeamsEdits(self._connector, self._service_of(chat), chat, self._post)
        writer = EditedMessages(edits, MAX_MESSAGE_LENGTH, str, reply_to)
        return LiveReply(writer, self._streaming, self._retry)

    async def _post(self, chat: ChatRef, activity: dict[str, Any]) -> str:
        assert self._sender is not None
        return await self._sender.post(chat, activity)

    def _service_of(self, chat: ChatRef) -> str:
        return self._services.get(chat.chat_id) or self._config.service_url

    async def _receive(self, request: web.Request) -> web.Response:
        """The JWT first (401 without a valid one: nothing reaches the model), then the activity, then the 200."""
        try:
            activity = await request.json()
        except ValueError:
            return web.Response(status=400, text="not JSON")
        if self._tokens is None:
            return web.Response(status=503, text="starting")
        if not isinstance(activity, dict):
            return web.Response(status=400, text="not an activity")
        try:
            await self._tokens.verify(request.headers.get("Authorization"), activity)
        except Unauthorized as exc:
            logger.warning("teams: refused an activity from %s: %s", request.remote, exc)
            return web.Response(status=401, text="unauthorized")
        if activity.get("type") == "invoke":
            return await self._invoke(activity)
        try:
            incoming = parse_activity(activity)
        except MalformedActivity as exc:
            logger.warning("teams: dropped a malformed activity: %s", exc)
            return web.Response(status=200)
        if incoming is None:
            return web.Response(status=200)
        self._services[incoming.message.chat.chat_id] = str(activity.get("serviceUrl") or self._config.service_url)
        try:
            await self._take(incoming)
        except BusClosed:
            return web.Response(status=503, text="stopping")
        return web.Response(status=200)

    async def _invoke(self, activity: dict[str, Any]) -> web.Response:
        """An invoke wants its answer as the HTTP response: the file consent's is a 200 once the upload is done, one
        the bot does not handle a 501."""
        if activity.get("name") != "fileConsent/invoke" or self._files is None:
            return web.Response(status=501)
        try:
            await self._files.answered(activity.get("value") or {})
        except ChannelError as exc:
            logger.warning("teams: the file upload after consent failed: %s", exc)
            return web.Response(status=500)
        return web.Response(status=200)

    async def _take(self, incoming: Incoming) -> None:
        """Publish one message, its files downloaded first; its id counts as seen only once it is published."""
        message = self.own(replace(incoming.message, stream=self._streaming.mode != "off"))
        message_id = message.platform_message_id or ""
        if message_id in self._seen:
            logger.info("[%s] duplicate delivery of %s dropped", message.chat.session_key, message_id)
            return
        if incoming.media:
            message = await attach_media(message, incoming.media, self._media_dir, self._fetch)
        await self._publish(message)
        self._seen.add(message_id)

    async def _fetch(self, media: MediaRef, target: Path) -> None:
        """A file's pre-authorised download URL as is; an inline image's content URL with the bot's token, which goes
        only to a Connector host an activity came from."""
        assert self._http is not None and self._credentials is not None
        headers: dict[str, str] = {}
        if media.kind == "image" and media.source == media.unique_id:
            services = {urlsplit(url).hostname for url in (*self._services.values(), self._config.service_url)}
            if urlsplit(media.source).hostname not in services:
                raise ChannelError(f"not sending the bot's token to {urlsplit(media.source).hostname}")
            headers["Authorization"] = f"Bearer {await self._credentials.token()}"
        await download_capped(self._http, media.source, target, headers)
