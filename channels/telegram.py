"""Telegram through python-telegram-bot: long polling in (confirming only journaled updates), HTML replies out."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.config.schema_channels import TelegramConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable, DeliveryAmbiguous, MarkupRejected, RateLimited
from bot.net.tls import client_context
from bot.retry import RetryPolicy
from channels.base import Channel, Publish
from channels.delivery import send_in_chunks
from channels.formatting import markdown_to_telegram_html
from channels.live_edits import EditedMessages
from channels.media import MediaRef, attach_media, kind_of
from channels.streaming import LiveReply, StreamSettings
from channels.telegram_files import group_upload, upload_groups
from channels.telegram_live import TelegramDraft, TelegramEdits

logger = logging.getLogger(__name__)

T = TypeVar("T")
MAX_MESSAGE_LENGTH = 4096
CAPTION_LIMIT = 1024
POLL_TIMEOUT = 10
POLL_BACKOFF = RetryPolicy(base_delay=0.5, max_delay=30.0)


def parse_update(raw: dict[str, Any], bot_id: int, bot_username: str) -> InboundMessage | None:
    """Turn a Bot API update into an InboundMessage; None for anything that is not a user's message."""
    message = raw.get("message")
    sender = (message or {}).get("from")
    if not message or not sender or sender.get("is_bot"):
        return None
    text = message.get("text") or message.get("caption") or ""
    if not text and media_of(message) is None:
        return None
    entities = message.get("entities") or message.get("caption_entities") or []
    chat = message["chat"]
    thread = message.get("message_thread_id") if message.get("is_topic_message") else None
    handle = f"@{bot_username}".lower()
    mentioned = _mentions(text, entities, handle, bot_id) or (
        (message.get("reply_to_message") or {}).get("from", {}).get("id") == bot_id
    )
    name = " ".join(p for p in (sender.get("first_name"), sender.get("last_name")) if p) or sender.get("username")
    return InboundMessage(
        chat=ChatRef("telegram", str(chat["id"]), str(thread) if thread else None),
        sender_id=str(sender["id"]),
        sender_name=name,
        text=_strip_handle(text, handle),
        is_direct=chat.get("type") == "private",
        mentioned=mentioned,
        platform_message_id=str(message["message_id"]),
        server_id=str(chat["id"]),  # a Telegram group is its own server
    )


_MEDIA_FIELDS: tuple[tuple[str, Literal["file", "voice"], str], ...] = (
    ("document", "file", "application/octet-stream"),
    ("voice", "voice", "audio/ogg"),
    ("audio", "file", "audio/mpeg"),
    ("video", "file", "video/mp4"),
)
"""The message fields that carry a file other than a photo: field, kind, the MIME type when none is given."""


def media_of(message: dict[str, Any]) -> MediaRef | None:
    """The photo (largest size), document, voice note, audio or video a message carries."""
    if photos := message.get("photo"):
        best = photos[-1]
        return MediaRef(best["file_id"], best["file_unique_id"], "image", "image/jpeg", best.get("file_size"))
    for key, kind, default_mime in _MEDIA_FIELDS:
        if item := message.get(key):
            mime = item.get("mime_type") or default_mime
            return MediaRef(
                item["file_id"],
                item["file_unique_id"],
                kind_of(mime) if kind == "file" else kind,
                mime,
                item.get("file_size"),
                item.get("file_name"),
            )
    return None


def _mentions(text: str, entities: list[dict[str, Any]], handle: str, bot_id: int) -> bool:
    """Whether an entity names the bot; Telegram counts offsets in UTF-16 code units."""
    units = text.encode("utf-16-le")
    for entity in entities:
        start, end = entity["offset"] * 2, (entity["offset"] + entity["length"]) * 2
        chunk = units[start:end].decode("utf-16-le", errors="replace").lower()
        if entity["type"] == "mention" and chunk == handle:
            return True
        if entity["type"] == "bot_command" and chunk.endswith(handle):
            return True
        if entity["type"] == "text_mention" and entity.get("user", {}).get("id") == bot_id:
            return True
    return False


def _strip_handle(text: str, handle: str) -> str:
    """Remove the bot's @handle from the text (so `/new@bot` reads `/new`)."""
    return re.sub(r"\s*" + re.escape(handle) + r"\b", "", text, flags=re.IGNORECASE).strip()


def file_base_url(api_base: str) -> str:
    """Bot API file URL from its method URL: `…/bot` becomes `…/file/bot`."""
    base = api_base.rstrip("/")
    return base[: -len("/bot")] + "/file/bot" if base.endswith("/bot") else base + "/file/bot"


class TelegramChannel(Channel):
    """Long-polls the Bot API, publishes messages (with media), replies in HTML."""

    name: ClassVar[str] = "telegram"

    def __init__(
        self, publish: Publish, config: TelegramConfig, media_dir: Path, retry: RetryPolicy | None = None
    ) -> None:
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._app: Any = None
        self._poller: asyncio.Task[None] | None = None
        self._bot_id = 0
        self._bot_username = ""

    async def start(self) -> None:
        from telegram.ext import Application
        from telegram.request import HTTPXRequest

        token = self._config.token.get_secret_value()
        if not token:
            raise ChannelError("channels.telegram.token is empty; set TELEGRAM_BOT_TOKEN or the config key")
        # PTB's two HTTP clients (polling, everything else) as its builder makes them, but sharing one TLS context
        # instead of loading the CA bundle into a new one each.
        tls = {"verify": client_context()}
        app = (
            Application.builder()
            .token(token)
            .base_url(self._config.api_base)
            .base_file_url(file_base_url(self._config.api_base))
            .request(HTTPXRequest(httpx_kwargs=tls))
            .get_updates_request(HTTPXRequest(connection_pool_size=1, httpx_kwargs=tls))
            .updater(None)
            .build()
        )
        try:
            await self._call(app.initialize)
            # Pending updates are kept: messages sent while the bot was down are answered now.
            await self._call(lambda: app.bot.delete_webhook(drop_pending_updates=False))
        except BaseException:
            await _quietly(app.shutdown)
            raise
        self._app = app
        self._bot_id = app.bot.id
        self._bot_username = app.bot.username or ""
        self._poller = asyncio.create_task(self._poll(), name="telegram-poll")

    async def stop(self) -> None:
        app, self._app = self._app, None
        if app is None:
            return
        if self._poller is not None:
            await cancel_and_wait(self._poller)  # it publishes to the bus, whose redis calls may swallow a cancel
            self._poller = None
        await _quietly(app.shutdown)

    async def _poll(self) -> None:
        """Long-poll; the offset moves past an update only once it is journaled, so a crash never loses one."""
        offset: int | None = None
        failures = 0
        while True:
            try:
                updates = await self._call(
                    partial(self._app.bot.get_updates, offset=offset, timeout=POLL_TIMEOUT, allowed_updates=["message"])
                )
            except ChannelError as exc:
                failures += 1
                delay = POLL_BACKOFF.delay(min(failures, 8))
                logger.warning("telegram: polling failed (%s); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            for update in updates:
                try:
                    await self._on_update(update.to_dict())
                except BusClosed:
                    logger.info("telegram: stopping intake; update %s stays with Telegram", update.update_id)
                    return
                offset = update.update_id + 1

    async def send(self, message: OutboundMessage) -> None:
        if message.files:
            await self._send_files(message)
            return
        chat_id = int(message.chat.chat_id)
        thread = int(message.chat.thread_id) if message.chat.thread_id else None
        quote = message.reply_to_platform_id if chat_id < 0 else None

        async def post(text: str, as_markup: bool, first: bool) -> None:
            from telegram import ReplyParameters

            reply = ReplyParameters(int(quote), allow_sending_without_reply=True) if quote and first else None
            await self._call(
                lambda: self._app.bot.send_message(
                    chat_id=chat_id,
                    text=text,
                    parse_mode="HTML" if as_markup else None,
                    message_thread_id=thread,
                    reply_parameters=reply,
                )
            )

        await send_in_chunks(message, MAX_MESSAGE_LENGTH, markdown_to_telegram_html, post, self._retry)

    async def _send_files(self, message: OutboundMessage) -> None:
        """Photos (images up to 10 MB) and documents, several of a kind as an album; a caption over Telegram's limit
        goes as text."""
        chat_id = int(message.chat.chat_id)
        thread = int(message.chat.thread_id) if message.chat.thread_id else None
        caption = message.text if len(message.text) <= CAPTION_LIMIT else None
        for index, group in enumerate(upload_groups(message.files)):
            upload = group_upload(self._app.bot, group, chat_id, caption if index == 0 else None, thread)
            names = ", ".join(Path(file.path).name for file in group)
            await self._retry.run(
                partial(self._call, upload),
                f"[{message.chat.session_key}] upload {names}",
                (ChannelUnavailable,),
            )
        if message.text and caption is None:
            await self.send(replace(message, files=()))

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """A draft bubble in private chats (`streaming: auto`), else an edited message; None when off."""
        mode = self._streaming.mode
        if mode == "off":
            return None
        if mode == "auto" and int(chat.chat_id) > 0:
            writer: Any = TelegramDraft(self._app.bot, self._call, chat)
        else:
            quote = reply_to if int(chat.chat_id) < 0 else None
            edits = TelegramEdits(self._app.bot, self._call, chat)
            writer = EditedMessages(edits, MAX_MESSAGE_LENGTH, markdown_to_telegram_html, quote)
        return LiveReply(writer, self._streaming, self._retry)

    async def show_typing(self, chat: ChatRef) -> None:
        """Show "typing…" in the chat (Telegram clears it after 5 s or at the next message)."""
        thread = int(chat.thread_id) if chat.thread_id else None
        await self._call(
            lambda: self._app.bot.send_chat_action(chat_id=int(chat.chat_id), action="typing", message_thread_id=thread)
        )

    async def _on_update(self, raw: dict[str, Any]) -> None:
        """Parse, download media, publish (journaled on return); a failure is logged, only BusClosed is raised."""
        message = parse_update(raw, self._bot_id, self._bot_username)
        if message is None:
            return
        message = replace(message, stream=self._streaming.mode != "off")
        try:
            media = media_of(raw["message"])
            if media is not None:
                message = await attach_media(message, [media], self._media_dir, self._download)
            await self._publish(message)
        except BusClosed:
            raise
        except Exception:
            logger.exception("[%s] could not handle update %s", message.chat.session_key, raw.get("update_id"))

    async def _download(self, media: MediaRef, target: Path) -> None:
        file = await self._call(lambda: self._app.bot.get_file(media.source))
        await self._call(lambda: file.download_to_drive(custom_path=target))

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one Bot API call, translating python-telegram-bot's errors into ours."""
        from telegram import error

        try:
            return await make()
        except error.RetryAfter as exc:
            wait = exc.retry_after
            raise RateLimited(wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)) from exc
        except error.BadRequest as exc:
            if "can't parse entities" in exc.message.lower() or "unsupported start tag" in exc.message.lower():
                raise MarkupRejected(exc.message) from exc
            raise ChannelError(exc.message) from exc
        except error.NetworkError as exc:
            if _request_was_written(exc):
                raise DeliveryAmbiguous(f"{exc.message}; Telegram may have received it") from exc
            raise ChannelUnavailable(exc.message) from exc
        except error.TelegramError as exc:
            raise ChannelError(exc.message) from exc


def _request_was_written(exc: Exception) -> bool:
    """Whether the connection failed after the request went out (a read timeout or a dropped response)."""
    import httpx

    cause = exc.__cause__
    return isinstance(cause, httpx.ReadTimeout | httpx.ReadError | httpx.RemoteProtocolError)


async def _quietly(step: Callable[[], Awaitable[None]]) -> None:
    """Run a shutdown step, logging instead of raising so later steps still run."""
    try:
        await step()
    except Exception as exc:
        logger.debug("telegram: shutdown step %s failed: %s", getattr(step, "__name__", step), exc)
