"""Discord through discord.py: gateway events in, REST replies out; each thread is a session of its own."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import mimetypes
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.config.schema_channels import DiscordConfig
from bot.errors import ChannelError, ChannelUnavailable, RateLimited
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.catchup import CATCH_UP_LIMIT, RecentChats
from channels.delivery import chunk_progress, send_in_chunks
from channels.discord_live import DiscordEdits
from channels.live_edits import EditedMessages, balance_fences
from channels.media import Fetch, MediaRef, attach_media, kind_of
from channels.streaming import LiveReply, StreamSettings

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_MESSAGE_LENGTH = 2000
READY_TIMEOUT = 60.0
USER_MESSAGE_TYPES = frozenset({0, 19})  # default and reply; the others are notices (joins, pins, thread starts)
_USER_MENTION = re.compile(r"<@!?(\d+)>")


@dataclass(frozen=True, slots=True)
class DiscordMessage:
    """What the adapter reads from a discord.Message, as plain data; `thread_parent_id` is set in threads."""

    id: int
    channel_id: int
    guild_id: int | None
    thread_parent_id: int | None
    type: int
    author_id: int
    author_name: str
    author_is_bot: bool
    content: str
    mentions: tuple[tuple[int, str], ...] = ()
    reply_to_author_id: int | None = None
    files: tuple[MediaRef, ...] = ()

    @classmethod
    def from_discord(cls, message: Any) -> DiscordMessage:
        """Read a discord.Message; threads are known from discord.py's cache (THREAD_CREATE, GUILD_CREATE)."""
        from discord import Thread

        channel = message.channel
        replied = message.reference.resolved if message.reference else None
        return cls(
            id=message.id,
            channel_id=channel.id,
            guild_id=message.guild.id if message.guild else None,
            thread_parent_id=channel.parent_id if isinstance(channel, Thread) else None,
            type=message.type.value,
            author_id=message.author.id,
            author_name=message.author.display_name,
            author_is_bot=message.author.bot,
            content=message.content,
            mentions=tuple((user.id, user.display_name) for user in message.mentions),
            reply_to_author_id=getattr(getattr(replied, "author", None), "id", None),
            files=tuple(
                attachment_ref(a.id, a.filename, a.content_type, a.size, a.is_voice_message())
                for a in message.attachments
            ),
        )


def attachment_ref(attachment_id: int, filename: str, content_type: str | None, size: int, is_voice: bool) -> MediaRef:
    """A Discord attachment as a MediaRef; the type comes from Discord, else from the file name."""
    mime = (content_type or "").split(";")[0].strip() or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    kind = "voice" if is_voice else kind_of(mime)
    return MediaRef(str(attachment_id), str(attachment_id), kind, mime, size, filename)


def parse_message(message: DiscordMessage, bot_id: int) -> InboundMessage | None:
    """Turn a Discord message into an InboundMessage; None for bots (this one too) and notices."""
    if message.author_is_bot or message.author_id == bot_id or message.type not in USER_MESSAGE_TYPES:
        return None
    text = readable_text(message.content, dict(message.mentions), bot_id)
    if not text and not message.files:
        return None
    if message.thread_parent_id is not None:
        chat = ChatRef("discord", str(message.thread_parent_id), str(message.channel_id))
    else:
        chat = ChatRef("discord", str(message.channel_id))
    mentioned = any(user_id == bot_id for user_id, _ in message.mentions) or message.reply_to_author_id == bot_id
    return InboundMessage(
        chat=chat,
        sender_id=str(message.author_id),
        sender_name=message.author_name,
        text=text,
        is_direct=message.guild_id is None,
        mentioned=mentioned,
        platform_message_id=str(message.id),
        server_id=str(message.guild_id) if message.guild_id is not None else None,
    )


def readable_text(content: str, names: dict[int, str], bot_id: int) -> str:
    """Drop the bot's own `<@id>` mention and show other mentioned users as @name."""
    content = re.sub(rf"[ \t]*<@!?{bot_id}>", "", content)
    return _USER_MENTION.sub(lambda m: f"@{names[int(m[1])]}" if int(m[1]) in names else m[0], content).strip()


def chunk_nonce(message_id: str, index: int) -> str:
    """A nonce per chunk: with enforce_nonce, Discord creates a retried chunk once (at most 25 characters)."""
    digest = hashlib.blake2b(f"{message_id}/{index}".encode(), digest_size=8).digest()
    return str(int.from_bytes(digest, "big"))


def as_discord_markdown(text: str) -> str:
    """Discord renders Markdown itself, so replies pass through unchanged."""
    return text


def point_discord_py_at(api_base: str, gateway_url: str) -> None:
    """Send discord.py's REST calls to `api_base` and its first gateway connection to `gateway_url`."""
    import yarl
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    # discord.py has no per-client setting for either: every Route and every fresh gateway session
    # read these class attributes. Set from the config at start, they hold for the whole process.
    Route.BASE = api_base.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)


class DiscordChannel(Channel):
    """A discord.py Client with the message-content intent; discord.py reconnects and resumes by itself."""

    name: ClassVar[str] = "discord"

    def __init__(
        self, publish: Publish, config: DiscordConfig, media_dir: Path, retry: RetryPolicy | None = None
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._client: Any = None
        self._gateway: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._active: RecentChats | None = None

    def remember_chats(self, chats: RecentChats) -> None:
        """Record DMs in `chats`, and at start read what they were sent while the bot was down."""
        self._active = chats

    async def start(self) -> None:
        import discord

        token = self._config.token.get_secret_value()
        if not token:
            raise ChannelError("channels.discord.token is empty; set DISCORD_BOT_TOKEN or the config key")
        point_discord_py_at(self._config.api_base, self._config.gateway_url)
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = intents.message_content = True
        # Replies ping the person asked, never @everyone, roles or users the model happens to write.
        mentions = discord.AllowedMentions(everyone=False, roles=False, users=False, replied_user=True)
        self._client = discord.Client(intents=intents, allowed_mentions=mentions)
        for event, handler in (
            ("on_connect", self._on_connect),
            ("on_disconnect", self._on_disconnect),
            ("on_resumed", self._on_resumed),
            ("on_message", self._on_message),
        ):
            setattr(self._client, event, handler)
        self._ready.clear()
        try:
            await self._connect(token)
        except BaseException:
            await self.stop()
            raise
        await self._catch_up()

    async def stop(self) -> None:
        client, self._client = self._client, None
        gateway, self._gateway = self._gateway, None
        if client is not None:
            await client.close()
        if gateway is not None:
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)

    async def send(self, message: OutboundMessage) -> None:
        target = self._client.get_partial_messageable(int(message.chat.thread_id or message.chat.chat_id))
        if message.files:
            await self._send_files(target, message)
            return
        answered = message.reply_to_platform_id
        reference = None
        if answered:
            reference = target.get_partial_message(int(answered)).to_reference(fail_if_not_exists=False)
        progress = chunk_progress.get()
        posted = progress.confirmed if progress else 0  # the chunk index, so a resumed send keeps each nonce

        async def post(text: str, as_markup: bool, first: bool) -> None:
            nonlocal posted
            nonce = chunk_nonce(message.id, posted)
            await self._call(lambda: target.send(text, reference=reference if first else None, nonce=nonce))
            posted += 1

        await send_in_chunks(message, MAX_MESSAGE_LENGTH, as_discord_markdown, post, self._retry)

    async def _send_files(self, target: Any, message: OutboundMessage) -> None:
        """The files as attachments of one message, the caption as its content (split off when too long)."""
        import discord

        caption = message.text if len(message.text) <= MAX_MESSAGE_LENGTH else None
        files = [discord.File(file.path, filename=Path(file.path).name) for file in message.files]
        nonce = chunk_nonce(message.id, 0)
        await self._call(lambda: target.send(caption or None, files=files, nonce=nonce))
        if message.text and caption is None:
            await self.send(replace(message, files=(), id=f"{message.id}-caption"))

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """One message edited as the reply grows (Discord has no drafts); None with `streaming: off`."""
        if self._streaming.mode == "off":
            return None
        target = self._client.get_partial_messageable(int(chat.thread_id or chat.chat_id))
        writer = EditedMessages(
            DiscordEdits(target, self._call), MAX_MESSAGE_LENGTH, as_discord_markdown, reply_to, balance_fences
        )
        return LiveReply(writer, self._streaming, self._retry)

    async def show_typing(self, chat: ChatRef) -> None:
        """Show "typing…" in the channel or thread (Discord clears it after 10 s or at the next message)."""
        target = self._client.get_partial_messageable(int(chat.thread_id or chat.chat_id))
        await self._call(target.typing)

    async def _connect(self, token: str) -> None:
        """Log in over REST, then run the gateway in a task; return once it sends READY."""
        await self._call(lambda: self._client.login(token))
        self._gateway = asyncio.create_task(self._client.connect(reconnect=True), name="discord-gateway")
        ready = asyncio.create_task(self._ready.wait())
        try:
            await asyncio.wait({ready, self._gateway}, timeout=READY_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._ready.is_set():
            self._gateway.add_done_callback(self._gateway_ended)
            return
        if not self._gateway.done():
            raise ChannelUnavailable(f"the gateway sent no READY within {READY_TIMEOUT:.0f}s")
        if (failure := self._gateway.exception()) is not None:
            raise translate_error(failure) from failure
        raise ChannelUnavailable("the gateway closed before READY")

    async def _on_connect(self) -> None:
        """READY: a new gateway session (at start, or when discord.py could not resume one)."""
        if self._ready.is_set():
            logger.warning("discord: gateway session replaced (resume refused); events meanwhile are lost")
        self._ready.set()

    async def _on_disconnect(self) -> None:
        if self._client is not None and not self._client.is_closed():
            logger.warning("discord: gateway connection lost")

    async def _on_resumed(self) -> None:
        logger.info("discord: gateway reconnected and resumed; missed events are replayed")

    async def _on_message(self, raw: Any) -> None:
        """discord.py handler: parse, download attachments, publish; failures are logged, not raised."""
        message = DiscordMessage.from_discord(raw)
        inbound = parse_message(message, self._client.user.id)
        if inbound is None:
            return
        inbound = replace(inbound, stream=self._streaming.mode != "off")
        try:
            if message.files:
                inbound = await attach_media(inbound, message.files, self._media_dir, self._saver(raw))
            await self._publish(inbound)
        except Exception:
            logger.exception("[%s] could not handle message %s", inbound.chat.session_key, message.id)
        if self._active is not None and inbound.is_direct:
            self._active.seen(inbound.chat, str(message.id))

    async def _catch_up(self) -> None:
        """Publish, in order, up to CATCH_UP_LIMIT messages per recent DM sent after the last one seen."""
        import discord

        for active in self._active.recent() if self._active else []:
            target = self._client.get_partial_messageable(int(active.chat.chat_id))
            try:
                missed = [
                    raw async for raw in target.history(after=discord.Object(int(active.last_id)), limit=CATCH_UP_LIMIT)
                ]
            except Exception as exc:
                logger.warning("[%s] catch-up failed: %s", active.chat.session_key, translate_error(exc))
                continue
            if missed:
                logger.info("[%s] catching up on %d message(s)", active.chat.session_key, len(missed))
            for raw in missed:
                await self._on_message(raw)

    def _saver(self, raw: Any) -> Fetch:
        """Download for a message's attachments, through discord.py (so the CDN URL it was given)."""
        attachments = {str(attachment.id): attachment for attachment in raw.attachments}

        async def save(media: MediaRef, target: Path) -> None:
            await self._call(lambda: attachments[media.source].save(target))

        return save

    def _gateway_ended(self, task: asyncio.Task[None]) -> None:
        if task is not self._gateway or task.cancelled():
            return
        failure = task.exception()
        reason = translate_error(failure) if failure else "closed"
        logger.error("discord: gateway stopped for good (%s); restart relaybot once it is fixed", reason)

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one discord.py call, translating its errors into ours."""
        import aiohttp
        import discord

        try:
            return await make()
        except (discord.DiscordException, aiohttp.ClientError, OSError) as exc:
            raise translate_error(exc) from exc


def translate_error(exc: BaseException) -> ChannelError:
    """discord.py's and the network's failures as our error tree (429 and 5xx outlasted discord.py's own retries)."""
    import aiohttp
    import discord

    if isinstance(exc, discord.RateLimited):
        return RateLimited(exc.retry_after)
    if isinstance(exc, discord.LoginFailure):
        return ChannelError("Discord refused the bot token; check channels.discord.token")
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        return ChannelError("Discord refused the Message Content intent; switch it on in the developer portal (Bot)")
    if isinstance(exc, discord.HTTPException):
        if exc.status == 429:
            return RateLimited(float(exc.response.headers.get("Retry-After") or 1))
        detail = f"Discord answered {exc.status} (code {exc.code}): {exc.text}"
        return ChannelUnavailable(detail) if exc.status >= 500 else ChannelError(detail)
    if isinstance(exc, discord.ConnectionClosed):
        return ChannelError(f"Discord closed the gateway ({exc.code}: {exc.reason})")
    if isinstance(exc, discord.GatewayNotFound | OSError | aiohttp.ClientError):
        return ChannelUnavailable(f"Discord is unreachable ({type(exc).__name__}: {exc})")
    return ChannelError(f"{type(exc).__name__}: {exc}")
