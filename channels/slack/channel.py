"""Slack through slack-bolt: Socket Mode events, button presses and slash commands in, mrkdwn replies out."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import urlsplit

from bot.bus import Attachment, ChatRef, InboundMessage, OutboundMessage
from bot.config.channels.slack import SlackConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from bot.storage.recent import RecentMap
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.catchup import CATCH_UP_LIMIT, ActiveChat, RecentChats
from channels.dedupe import SeenIds
from channels.formatting import markdown_to_slack_mrkdwn
from channels.live_edits import EditedMessages
from channels.media import MediaRef, attach_media, download_capped
from channels.slack.calls import call_slack
from channels.slack.live import Posted, SlackEdits, SlackStream
from channels.slack.parse import files_of, parse_event, parse_press, parse_slash_command
from channels.slack.send import MAX_MESSAGE_LENGTH, SlackSender
from channels.slack.status import SlackStatus
from channels.slack.threads import ThreadReader
from channels.streaming import LiveReply, StreamSettings

if TYPE_CHECKING:
    import aiohttp
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

logger = logging.getLogger(__name__)

CONNECT_TIMEOUT = 30.0
NAME_TIMEOUT = 1.0
NAMES_KEPT = 5_000  # display names cached, least recently seen sender dropped first
Ack = Callable[[], Awaitable[None]]


class SlackChannel(Channel):
    """Receives events over Socket Mode (no public URL needed) and posts replies with chat.postMessage."""

    name: ClassVar[str] = "slack"

    def __init__(
        self,
        publish: Publish,
        config: SlackConfig,
        media_dir: Path,
        retry: RetryPolicy | None = None,
        ping_interval: float = 10.0,
        account: str | None = None,
    ) -> None:
        """`account` names this bot among the platform's (None: the default one); its chats carry it."""
        self.account = account
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._team_id = ""
        self._ping_interval = ping_interval
        self._client: Any = None
        self._sender: SlackSender | None = None
        self._status: SlackStatus | None = None
        self._threads: ThreadReader | None = None
        self._handler: AsyncSocketModeHandler | None = None
        self._http: aiohttp.ClientSession | None = None
        self._bot_user_id = ""
        self._bot_threads = SeenIds()
        self._names: RecentMap[str, str] = RecentMap(NAMES_KEPT)  # the senders seen most lately
        self._hello = asyncio.Event()
        self._connections = 0
        self._disconnect_reason: str | None = None
        self._active: RecentChats | None = None

    def remember_chats(self, chats: RecentChats) -> None:
        """Record DMs and the bot's threads in `chats`, and at start read what they were sent while it was down."""
        self._active = chats

    async def start(self) -> None:
        import aiohttp
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
        from slack_bolt.async_app import AsyncApp
        from slack_sdk.web.async_client import AsyncWebClient

        bot_token, app_token = self._config.bot_token.get_secret_value(), self._config.app_token.get_secret_value()
        if not bot_token or not app_token:
            raise ChannelError(
                "channels.slack needs bot_token (xoxb-…) and app_token (xapp-…); "
                "set SLACK_BOT_TOKEN and SLACK_APP_TOKEN"
            )
        # Retries are ours, once per chunk; the SDK's own would re-post a message Slack may have received.
        client = AsyncWebClient(token=bot_token, base_url=self._config.api_base, retry_handlers=[])
        identity = await call_slack(client.auth_test)
        # The envelope is acked only after the listener returns, so only once the message is journaled.
        app = AsyncApp(client=client, signing_secret="", process_before_response=True)
        app.event("message")(self._on_event)
        app.event("app_mention")(self._on_event)
        app.action(re.compile(".*"))(self._on_press)
        app.command(re.compile(".*"))(self._on_command)
        handler = AsyncSocketModeHandler(app, app_token, ping_interval=self._ping_interval)
        handler.client.on_message_listeners.append(self._on_frame)
        # Everything the listeners use is in place first: events follow the hello at once.
        self._client, self._handler, self._bot_user_id = client, handler, identity["user_id"]
        self._sender = SlackSender(client, call_slack, self._retry)
        self._status = SlackStatus(client, call_slack)
        self._threads = ThreadReader(client, call_slack, self._bot_user_id, self._sender_name, self._save_image)
        self._team_id = identity.get("team_id") or ""
        self._http = aiohttp.ClientSession()
        self._hello.clear()
        self._connections = 0
        try:
            # Fetching the first URL here makes a refused app token fail start();
            # the SDK's own connect() would retry forever.
            handler.client.wss_uri = await call_slack(handler.client.issue_new_wss_url)
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await handler.connect_async()
                await self._hello.wait()
        except TimeoutError as exc:
            await self.stop()
            raise ChannelUnavailable(f"Socket Mode did not connect within {CONNECT_TIMEOUT:.0f}s") from exc
        except BaseException:
            await self.stop()
            raise
        for active in self._active.recent() if self._active else []:
            await self._catch_up(active)

    async def stop(self) -> None:
        handler, self._handler = self._handler, None
        http, self._http = self._http, None
        threads, self._threads = self._threads, None
        if handler is not None:
            await handler.close_async()
        if threads is not None:
            await threads.close()
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        assert self._sender is not None and self._status is not None
        if message.chat.thread_id:
            self._bot_threads.add(f"{message.chat.chat_id}:{message.chat.thread_id}")
        await self._sender.send(message)
        await self._status.replied(message.chat, message.chat.thread_id)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """reactions.add / reactions.remove: eyes, then white_check_mark or x."""
        if self._status is not None:
            await self._status.react(chat, message_id, status)

    async def show_typing(self, chat: ChatRef) -> None:
        """assistant.threads.setStatus "is thinking…" in the chat's thread, where the app may set it."""
        if self._status is not None:
            await self._status.show_thinking(chat, threads_dms=self._streaming.mode == "auto")

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """Slack's streaming API in threads and DMs (`streaming: auto`), else an edited message; None when off."""
        if self._streaming.mode == "off" or self._client is None or self._sender is None:
            return None
        if chat.thread_id:
            self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")
        sender, status = self._sender, self._status

        def posted_in(thread_ts: str | None) -> Posted:
            async def posted(ts: str) -> None:
                if reply_to:
                    sender.remember_reply(reply_to, f"{chat.chat_id}:{ts}")
                if status is not None:
                    await status.replied(chat, thread_ts)

            return posted

        edits = SlackEdits(self._client, call_slack, chat, posted_in(chat.thread_id))
        writer: Any = EditedMessages(edits, MAX_MESSAGE_LENGTH, markdown_to_slack_mrkdwn)
        is_direct = chat.chat_id.startswith("D")
        # Slack streams only replies: in a DM the live reply threads under the message it answers.
        thread_ts = chat.thread_id or (reply_to.rpartition(":")[2] if reply_to and is_direct else None)
        if self._streaming.mode == "auto" and thread_ts:
            addressee = None if is_direct or not recipient else (recipient, self._team_id)
            writer = SlackStream(
                self._client,
                call_slack,
                chat,
                thread_ts,
                addressee,
                markdown_to_slack_mrkdwn,
                writer,
                posted_in(thread_ts),
            )
        return LiveReply(writer, self._streaming, self._retry)

    async def _on_event(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """Bolt listener, run before the ack: parse, name the sender, read a new thread, download files, publish."""
        message = parse_event(event, self._bot_user_id, self._config.reply_in_thread, self._bot_threads)
        if message is None:
            return
        message = self.own(replace(message, stream=self._streaming.mode != "off"))
        if message.edit_of is None and message.is_direct and self._status is not None:
            self._status.asked(message.chat, event["ts"])
        try:
            message = await self._thread_start(message, event)
            message = await attach_media(message, files_of(event), self._media_dir, self._fetch)
            await self._publish(await self._named(message))
        except BusClosed:
            raise  # no ack: Slack delivers the event again after the restart
        except Exception:
            logger.exception("[%s] could not handle event %s", message.chat.session_key, body.get("event_id"))
        followed = message.is_direct or (message.chat.thread_id and message.mentioned)
        if self._active is not None and message.edit_of is None and followed:
            self._active.seen(message.chat, event["ts"])

    async def _thread_start(self, message: InboundMessage, event: dict[str, Any]) -> InboundMessage:
        """The first mention in a thread the bot has not been in brings the parent and the earlier replies."""
        thread_ts, ts = event.get("thread_ts"), event.get("ts")
        chat = message.chat
        if (
            self._threads is None
            or not message.mentioned
            or message.edit_of is not None
            or not thread_ts
            or thread_ts == ts
            or f"{chat.chat_id}:{thread_ts}" in self._bot_threads
        ):
            return message
        start = await self._threads.first_mention(chat.chat_id, thread_ts, str(ts))
        return replace(message, reply_to=start.parent, context=start.earlier)

    async def _on_press(self, ack: Ack, body: dict[str, Any]) -> None:
        """Bolt listener for a button press: published, then acked (Slack wants the ack within 3 s)."""
        message = parse_press(body)
        if message is not None:
            # BusClosed propagates: no ack, and Slack tells the user the press failed.
            await self._publish(await self._named(self.own(message)))
        await ack()

    async def _on_command(self, ack: Ack, body: dict[str, Any]) -> None:
        """Bolt listener for a slash command: published as `/name args`, then acked with nothing to show."""
        message = parse_slash_command(body)
        if message is not None:
            await self._publish(await self._named(self.own(replace(message, stream=self._streaming.mode != "off"))))
        await ack()

    async def _catch_up(self, active: ActiveChat) -> None:
        """Publish, in order, up to CATCH_UP_LIMIT messages the chat was sent after the last one seen."""
        client, chat = self._client, active.chat
        limit, oldest = CATCH_UP_LIMIT, active.last_id
        try:
            if chat.thread_id:
                self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")
                thread = chat.thread_id
                answer = await call_slack(
                    lambda: client.conversations_replies(channel=chat.chat_id, ts=thread, oldest=oldest, limit=limit)
                )
            else:
                answer = await call_slack(
                    lambda: client.conversations_history(channel=chat.chat_id, oldest=oldest, limit=limit)
                )
        except ChannelError as exc:
            logger.warning("[%s] catch-up failed: %s", chat.session_key, exc)
            return
        missed = sorted((m for m in answer["messages"] if float(m["ts"]) > float(oldest)), key=lambda m: float(m["ts"]))
        if missed:
            logger.info("[%s] catching up on %d message(s)", chat.session_key, len(missed))
        channel_type = "im" if chat.chat_id.startswith("D") else "channel"
        for event in missed[-limit:]:
            await self._on_event({**event, "channel": chat.chat_id, "channel_type": channel_type}, {})

    async def _named(self, message: InboundMessage) -> InboundMessage:
        """The message with its sender's display name, unless users.info is slow (presses must be acked in 3 s)."""
        try:
            async with asyncio.timeout(NAME_TIMEOUT):
                name = await self._sender_name(message.sender_id)
        except TimeoutError:
            return message
        return replace(message, sender_name=name) if name else message

    async def _sender_name(self, user_id: str) -> str | None:
        """The user's display name from users.info, cached; None when Slack will not say."""
        if user_id in self._names:
            self._names.touch(user_id)
        else:
            try:
                answer = await call_slack(partial(self._client.users_info, user=user_id))
            except ChannelError as exc:
                logger.debug("slack: users.info %s failed: %s", user_id, exc)
                return None
            user = answer["user"]
            profile = user.get("profile") or {}
            self._names[user_id] = profile.get("display_name") or user.get("real_name") or user.get("name") or ""
        return self._names[user_id] or None

    async def _save_image(self, channel: str, media: MediaRef) -> Attachment | None:
        """A quoted message's image, saved in the chat's inbox; None when it cannot be downloaded."""
        target = self._media_dir / ChatRef("slack", channel, account=self.account).folder / media.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self._fetch(media, target)
        except ChannelError as exc:
            logger.info("slack: quoted image %s not downloaded: %s", media.unique_id, exc)
            return None
        return Attachment(str(target), media.mime_type, media.kind)

    async def _fetch(self, media: MediaRef, target: Path) -> None:
        assert self._http is not None
        host = urlsplit(media.source).hostname or ""
        if host != urlsplit(self._config.api_base).hostname and host != "slack.com" and not host.endswith(".slack.com"):
            raise ChannelError(f"not sending the bot token to {host}")
        token = self._config.bot_token.get_secret_value()
        content_type = await download_capped(self._http, media.source, target, {"Authorization": f"Bearer {token}"})
        if content_type == "text/html" and media.mime_type != "text/html":
            target.unlink(missing_ok=True)
            raise ChannelError("Slack answered with a login page; does the app have the files:read scope?")

    async def _on_frame(self, frame: aiohttp.WSMessage) -> None:
        """Socket Mode frame listener: notes the first hello, and logs each reconnection the SDK makes in one line."""
        try:
            data = json.loads(frame.data)
        except ValueError:
            return  # an exception here would stall the SDK's receive loop
        if data.get("type") == "disconnect":
            self._disconnect_reason = data.get("reason")
        elif data.get("type") == "hello":
            if self._connections:
                reason = self._disconnect_reason or "connection lost"
                logger.info("slack: Socket Mode reconnected (%s, connection %d)", reason, self._connections + 1)
            self._connections += 1
            self._disconnect_reason = None
            self._hello.set()
