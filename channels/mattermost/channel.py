"""Mattermost through its REST API v4 and WebSocket (plain aiohttp); buttons and slash commands call the gateway."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from aiohttp import web

from bot.bus import ChatRef, OutboundMessage
from bot.commands.catalogue import CommandSpec
from bot.config.channels.mattermost import MattermostConfig
from bot.errors import BusClosed, ChannelError
from bot.retry import RetryPolicy
from bot.storage.recent import RecentMap
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.catchup import RecentChats
from channels.dedupe import RECENT_DELIVERIES, SeenIds
from channels.live_edits import EditedMessages
from channels.mattermost.buttons import ACTIONS_PATH, action_key, verified
from channels.mattermost.calls import MattermostApi
from channels.mattermost.live import MattermostEdits
from channels.mattermost.menu import COMMANDS_PATH, SlashCommands
from channels.mattermost.missed import read_missed
from channels.mattermost.parse import CHANNEL, DIRECT, parse_event, parse_press, parse_slash_command
from channels.mattermost.send import MAX_MESSAGE_LENGTH, MattermostSender
from channels.mattermost.websocket import EventStream
from channels.media import MediaRef, attach_media, download_capped
from channels.streaming import LiveReply, StreamSettings

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

REACTIONS: dict[ReactionStatus, str] = {"seen": "eyes", "done": "white_check_mark", "failed": "x"}
CHANNELS_KEPT = 4096  # channel types remembered, so a press knows whether it came from a DM


class MattermostChannel(Channel):
    """Reads posts from the WebSocket and answers with posts; presses and commands arrive on `webhook_routes`."""

    name: ClassVar[str] = CHANNEL

    def __init__(
        self,
        publish: Publish,
        config: MattermostConfig,
        media_dir: Path,
        retry: RetryPolicy | None = None,
        reconnect_delay: float = 1.0,
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._reconnect_delay = reconnect_delay
        self._streaming = StreamSettings.of(config)
        self._key = action_key(config.token.get_secret_value())
        self._callback = config.callback_url.rstrip("/")
        self._http: aiohttp.ClientSession | None = None
        self._api: MattermostApi | None = None
        self._sender: MattermostSender | None = None
        self._events: EventStream | None = None
        self._slash: SlashCommands | None = None
        self._bot_id = ""
        self._bot_username = ""
        self._seen = SeenIds(RECENT_DELIVERIES)
        self._bot_threads = SeenIds()
        self._channel_types: RecentMap[str, str] = RecentMap(CHANNELS_KEPT)
        self._marks: RecentMap[str, str] = RecentMap(CHANNELS_KEPT)  # post id -> the bot's status emoji on it
        self._active: RecentChats | None = None

    def remember_chats(self, chats: RecentChats) -> None:
        """Note DMs and the bot's threads in `chats`, and at start read what they were sent while it was down."""
        self._active = chats

    def webhook_routes(self) -> Sequence[web.RouteDef]:
        """Button presses and slash commands, POSTed by the Mattermost server to `callback_url`."""
        return [web.post(ACTIONS_PATH, self._on_action), web.post(COMMANDS_PATH, self._on_command)]

    async def start(self) -> None:
        import aiohttp

        config = self._config
        token = config.token.get_secret_value()
        if not config.url or not token:
            raise ChannelError("channels.mattermost needs url and token (the bot account's access token)")
        http = self._http = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60))
        api = MattermostApi(http, config.url, token)
        try:
            me = await api.me()
            self._bot_id, self._bot_username = str(me["id"]), str(me["username"])
            self._api = api
            callback = f"{self._callback}{ACTIONS_PATH}" if self._callback else None
            self._sender = MattermostSender(api, self._retry, callback, self._key)
            self._slash = SlashCommands(api, f"{self._callback}{COMMANDS_PATH}" if self._callback else None)
            events = EventStream(http, config.url, token, self._on_event, self._reconnect_delay)
            await events.start()
            self._events = events
            for active in self._active.recent() if self._active else []:
                if active.chat.thread_id:
                    self._bot_threads.add(f"{active.chat.chat_id}:{active.chat.thread_id}")
                await read_missed(api, active, self._on_event)
        except BaseException:
            await self.stop()
            raise
        logger.info("mattermost: connected as @%s", self._bot_username)

    async def stop(self) -> None:
        events, self._events = self._events, None
        http, self._http = self._http, None
        self._api = self._sender = self._slash = None
        if events is not None:
            await events.stop()
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        if self._sender is None:
            raise ChannelError("mattermost is not started")
        if message.chat.thread_id:
            self._bot_threads.add(f"{message.chat.chat_id}:{message.chat.thread_id}")
        await self._sender.send(message)

    async def show_typing(self, chat: ChatRef) -> None:
        """ "relaybot is typing…" through the WebSocket's `user_typing` action."""
        if self._events is not None:
            await self._events.typing(chat.chat_id, chat.thread_id)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """:eyes: when seen, then :white_check_mark: or :x: in its place; a failure is only logged."""
        if self._api is None:
            return
        emoji, earlier = REACTIONS[status], self._marks.get(message_id)
        try:
            if earlier and earlier != emoji:
                await self._api.remove_reaction(self._bot_id, message_id, earlier)
            await self._api.add_reaction(self._bot_id, message_id, emoji)
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)
            return
        self._marks[message_id] = emoji

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """One post edited in place as the reply grows; None when streaming is off."""
        if self._streaming.mode == "off" or self._api is None or self._sender is None:
            return None
        if chat.thread_id:
            self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")
        sender = self._sender

        def posted(post_id: str) -> None:
            if reply_to:
                sender.remember_reply(reply_to, post_id)

        edits = MattermostEdits(self._api, chat, posted)
        return LiveReply(EditedMessages(edits, MAX_MESSAGE_LENGTH, str), self._streaming, self._retry)

    async def set_commands(self, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
        """Register the commands as custom slash commands in each of the bot's teams (needs `callback_url`)."""
        if self._slash is not None:
            await self._slash.register(commands)

    async def _on_event(self, event: dict[str, Any]) -> None:
        """One WebSocket event: a new or edited post by someone else is published, its files downloaded first."""
        data, broadcast = event.get("data") or {}, event.get("broadcast") or {}
        if event.get("event") == "posted" and broadcast.get("channel_id") and data.get("channel_type"):
            self._channel_types[str(broadcast["channel_id"])] = str(data["channel_type"])
        incoming = parse_event(event, self._bot_id, self._bot_username, self._bot_threads, self._config.reply_in_thread)
        if incoming is None:
            return
        message = incoming.message
        key = message.platform_message_id or ""
        if key in self._seen:
            logger.info("[%s] duplicate delivery of %s dropped", message.chat.session_key, key)
            return
        message = replace(message, stream=self._streaming.mode != "off")
        if incoming.media:
            message = await attach_media(message, incoming.media, self._media_dir, self._fetch)
        await self._publish(message)
        self._seen.add(key)
        chat = message.chat
        followed = (message.is_direct and not chat.thread_id) or (chat.thread_id and message.mentioned)
        if self._active is not None and message.edit_of is None and followed:
            self._active.seen(chat, str(incoming.created_at))

    async def _on_action(self, request: web.Request) -> web.Response:
        """A button press: checked against the context's signature, published, then answered with nothing."""
        try:
            body = await request.json()
        except ValueError:
            return web.json_response({"error": "not JSON"}, status=400)
        if not isinstance(body, dict) or not verified(self._key, body.get("context") or {}):
            logger.warning("mattermost: refused a button callback with a missing or wrong signature")
            return web.json_response({"error": "not a relaybot button"}, status=403)
        is_direct = self._channel_types.get(str(body.get("channel_id"))) == DIRECT
        message = parse_press(body, is_direct)
        if message is not None:
            try:
                await self._publish(message)
            except BusClosed:
                return web.json_response({"ephemeral_text": "relaybot is restarting; press again soon."})
        return web.json_response({})

    async def _on_command(self, request: web.Request) -> web.Response:
        """A slash command: its token checked, published as `/name args`, answered with nothing to show."""
        form = {key: str(value) for key, value in (await request.post()).items()}
        if self._slash is None or not self._slash.knows(form.get("token", "")):
            logger.warning("mattermost: refused a slash command with an unknown token")
            return web.json_response({"text": "unknown command token"}, status=403)
        message = parse_slash_command(form)
        if message is None:
            return web.json_response({"response_type": "ephemeral", "text": "That command was incomplete."})
        try:
            await self._publish(replace(message, stream=self._streaming.mode != "off"))
        except BusClosed:
            return web.json_response({"response_type": "ephemeral", "text": "relaybot is restarting; try again soon."})
        return web.json_response({"response_type": "ephemeral", "text": ""})

    async def _fetch(self, media: MediaRef, target: Path) -> None:
        assert self._http is not None and self._api is not None
        await download_capped(self._http, self._api.file_url(media.source), target, self._api.auth)
