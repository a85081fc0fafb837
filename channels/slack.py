"""Slack through slack-bolt: Socket Mode events in, mrkdwn replies out."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Container
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.config.schema_channels import SlackConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable, RateLimited
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.catchup import CATCH_UP_LIMIT, ActiveChat, RecentChats
from channels.dedupe import SeenIds
from channels.delivery import send_in_chunks
from channels.formatting import markdown_to_slack_mrkdwn
from channels.live_edits import EditedMessages
from channels.media import MediaRef, attach_media, download_capped, kind_of
from channels.slack_live import SlackEdits, SlackStream
from channels.streaming import LiveReply, StreamSettings

if TYPE_CHECKING:
    import aiohttp
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_sdk.errors import SlackApiError
    from slack_sdk.web.async_client import AsyncWebClient

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_MESSAGE_LENGTH = 3900  # Slack accepts 40,000 but advises at most 4,000 characters per message
CONNECT_TIMEOUT = 30.0
USER_SUBTYPES = frozenset({None, "file_share", "thread_broadcast"})
TRANSIENT_ERRORS = frozenset({"internal_error", "service_unavailable", "request_timeout"})


def parse_event(
    event: dict[str, Any], bot_user_id: str, reply_in_thread: bool, bot_threads: Container[str] = ()
) -> InboundMessage | None:
    """Turn a `message` or `app_mention` event into an InboundMessage; None for bots, edits and service messages.

    `bot_threads` holds `channel:thread_ts` of threads the bot answered in: a reply there counts as a mention.
    """
    if event.get("type") not in ("message", "app_mention") or event.get("subtype") not in USER_SUBTYPES:
        return None
    user, channel, ts = event.get("user"), event.get("channel"), event.get("ts")
    if event.get("bot_id") or not user or user == bot_user_id or not channel or not ts:
        return None
    text = event.get("text") or ""
    if not text.strip() and not files_of(event):
        return None
    is_direct = event.get("channel_type", "im" if channel.startswith("D") else "channel") == "im"
    thread_ts = event.get("thread_ts")
    mention = re.compile(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>")
    mentioned = (
        event["type"] == "app_mention"
        or mention.search(text) is not None
        or (thread_ts is not None and f"{channel}:{thread_ts}" in bot_threads)
    )
    session_thread = thread_ts or (ts if reply_in_thread and not is_direct else None)
    return InboundMessage(
        chat=ChatRef("slack", channel, session_thread),
        sender_id=user,
        text=_unescape(mention.sub("", text)).strip(),
        is_direct=is_direct,
        mentioned=mentioned,
        platform_message_id=f"{channel}:{ts}",
        server_id=event.get("team") or None,
    )


def files_of(event: dict[str, Any]) -> list[MediaRef]:
    """The downloadable files a message carries (Slack leaves out the URL of files the bot may not see)."""
    found = []
    for file in event.get("files") or []:
        url = file.get("url_private_download") or file.get("url_private")
        if url:
            mime = file.get("mimetype") or "application/octet-stream"
            found.append(MediaRef(url, file["id"], kind_of(mime), mime, file.get("size"), file.get("name")))
    return found


def _unescape(text: str) -> str:
    """Slack escapes exactly these three characters in message text."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


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
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._team_id = ""
        self._ping_interval = ping_interval
        self._client: AsyncWebClient | None = None
        self._handler: AsyncSocketModeHandler | None = None
        self._http: aiohttp.ClientSession | None = None
        self._bot_user_id = ""
        self._bot_threads = SeenIds()
        self._names: dict[str, str] = {}
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
        identity = await self._call(client.auth_test)
        # The envelope is acked only after the listener returns, so only once the message is journaled.
        app = AsyncApp(client=client, signing_secret="", process_before_response=True)
        app.event("message")(self._on_event)
        app.event("app_mention")(self._on_event)
        handler = AsyncSocketModeHandler(app, app_token, ping_interval=self._ping_interval)
        handler.client.on_message_listeners.append(self._on_frame)
        # Everything the listeners use is in place first: events follow the hello at once.
        self._client, self._handler, self._bot_user_id = client, handler, identity["user_id"]
        self._team_id = identity.get("team_id") or ""
        self._http = aiohttp.ClientSession()
        self._hello.clear()
        self._connections = 0
        try:
            # Fetching the first URL here makes a refused app token fail start();
            # the SDK's own connect() would retry forever.
            handler.client.wss_uri = await self._call(handler.client.issue_new_wss_url)
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
        if handler is not None:
            await handler.close_async()
        if http is not None:
            await http.close()

    async def send(self, message: OutboundMessage) -> None:
        chat = message.chat
        if message.files:
            await self._send_files(message)
            return
        if chat.thread_id:
            self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")

        async def post(text: str, as_markup: bool, first: bool) -> None:
            assert self._client is not None
            await self._call(
                partial(
                    self._client.chat_postMessage,
                    channel=chat.chat_id,
                    text=text,
                    thread_ts=chat.thread_id,
                    mrkdwn=as_markup,
                )
            )

        await send_in_chunks(message, MAX_MESSAGE_LENGTH, markdown_to_slack_mrkdwn, post, self._retry)

    async def _send_files(self, message: OutboundMessage) -> None:
        """Slack's external upload (files.getUploadURLExternal, the bytes, files.completeUploadExternal)."""
        assert self._client is not None
        uploads = [
            {"file": file.path, "filename": Path(file.path).name, "title": Path(file.path).name}
            for file in message.files
        ]
        await self._call(
            partial(
                self._client.files_upload_v2,
                file_uploads=uploads,
                channel=message.chat.chat_id,
                thread_ts=message.chat.thread_id,
                initial_comment=message.text or None,
            )
        )

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """Slack's streaming API in threads and DMs (`streaming: auto`), else an edited message; None when off."""
        if self._streaming.mode == "off" or self._client is None:
            return None
        if chat.thread_id:
            self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")
        edits = SlackEdits(self._client, self._call, chat)
        writer: Any = EditedMessages(edits, MAX_MESSAGE_LENGTH, markdown_to_slack_mrkdwn)
        is_direct = chat.chat_id.startswith("D")
        # Slack streams only replies: in a DM the live reply threads under the message it answers.
        thread_ts = chat.thread_id or (reply_to.rpartition(":")[2] if reply_to and is_direct else None)
        if self._streaming.mode == "auto" and thread_ts:
            addressee = None if is_direct or not recipient else (recipient, self._team_id)
            writer = SlackStream(self._client, self._call, chat, thread_ts, addressee, markdown_to_slack_mrkdwn, writer)
        return LiveReply(writer, self._streaming, self._retry)

    async def _on_event(self, event: dict[str, Any], body: dict[str, Any]) -> None:
        """Bolt listener, run before the ack: parse, name the sender, download files, publish (journaled)."""
        message = parse_event(event, self._bot_user_id, self._config.reply_in_thread, self._bot_threads)
        if message is None:
            return
        message = replace(message, stream=self._streaming.mode != "off")
        try:
            message = await attach_media(message, files_of(event), self._media_dir, self._fetch)
            name = await self._sender_name(message.sender_id)
            if name:
                message = replace(message, sender_name=name)
            await self._publish(message)
        except BusClosed:
            raise  # no ack: Slack delivers the event again after the restart
        except Exception:
            logger.exception("[%s] could not handle event %s", message.chat.session_key, body.get("event_id"))
        if self._active is not None and (message.is_direct or (message.chat.thread_id and message.mentioned)):
            self._active.seen(message.chat, event["ts"])

    async def _catch_up(self, active: ActiveChat) -> None:
        """Publish, in order, up to CATCH_UP_LIMIT messages the chat was sent after the last one seen."""
        assert self._client is not None
        client, chat = self._client, active.chat
        limit, oldest = CATCH_UP_LIMIT, active.last_id
        try:
            if chat.thread_id:
                self._bot_threads.add(f"{chat.chat_id}:{chat.thread_id}")
                thread = chat.thread_id
                answer = await self._call(
                    lambda: client.conversations_replies(channel=chat.chat_id, ts=thread, oldest=oldest, limit=limit)
                )
            else:
                answer = await self._call(
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

    async def _sender_name(self, user_id: str) -> str | None:
        """The user's display name from users.info, cached; None when Slack will not say."""
        if user_id not in self._names:
            assert self._client is not None
            try:
                answer = await self._call(partial(self._client.users_info, user=user_id))
            except ChannelError as exc:
                logger.debug("slack: users.info %s failed: %s", user_id, exc)
                return None
            user = answer["user"]
            profile = user.get("profile") or {}
            self._names[user_id] = profile.get("display_name") or user.get("real_name") or user.get("name") or ""
        return self._names[user_id] or None

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

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one Web API call, translating slack_sdk's and aiohttp's errors into ours."""
        import aiohttp
        from slack_sdk.errors import SlackApiError

        try:
            return await make()
        except SlackApiError as exc:
            raise _translate(exc) from exc
        except TimeoutError as exc:
            raise ChannelError("timed out; not retried, as Slack may have received it") from exc
        except aiohttp.ClientError as exc:
            raise ChannelUnavailable(f"{type(exc).__name__}: {exc}") from exc


def _translate(exc: SlackApiError) -> ChannelError:
    response = exc.response
    data = response.data if isinstance(response.data, dict) else {}
    error = data.get("error") or f"HTTP {response.status_code}"
    if response.status_code == 429 or error == "ratelimited":
        # Slack limits each method per workspace: every chat waits.
        return RateLimited(float(response.headers.get("Retry-After", 1)), whole_bot=True)
    if response.status_code >= 500 or error in TRANSIENT_ERRORS:
        return ChannelUnavailable(error)
    return ChannelError(error)
