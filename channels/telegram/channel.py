"""Telegram through python-telegram-bot: long polling in (confirming only journaled updates), HTML replies out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from bot.bus import Attachment, ChatRef, InboundMessage, OutboundMessage
from bot.cancelling import cancel_and_wait
from bot.commands.catalogue import CommandSpec
from bot.config.channels.telegram import TelegramConfig
from bot.errors import BusClosed, ChannelError, ChannelUnavailable, ChatMoved
from bot.net.tls import client_context
from bot.retry import RetryPolicy
from channels.abilities import ReactionStatus
from channels.base import Channel, Publish
from channels.formatting import markdown_to_telegram_html
from channels.live_edits import EditedMessages
from channels.liveness import Liveness
from channels.media import MAX_MEDIA_BYTES, MediaRef, attach_media
from channels.sent_replies import SentReplies
from channels.streaming import LiveReply, StreamSettings
from channels.telegram.albums import AlbumGatherer, AlbumPart, merge_album
from channels.telegram.calls import call_bot_api
from channels.telegram.library import skip_httpx_cli
from channels.telegram.live import TelegramDraft, TelegramEdits
from channels.telegram.menu import offer_commands
from channels.telegram.moves import ChatMoves
from channels.telegram.parse import UPDATE_KINDS, album_of, media_of, message_of, parse_update, replied_image
from channels.telegram.send import MAX_MESSAGE_LENGTH, TelegramSender

logger = logging.getLogger(__name__)

T = TypeVar("T")
POLL_BACKOFF = RetryPolicy(base_delay=0.5, max_delay=30.0)
TURN_HOPS = 3  # loop turns from a published update to its turn: the bus's dispatcher, the agent's lane, one to spare

REACTIONS: dict[ReactionStatus, str] = {"seen": "👀", "done": "👍", "failed": "👎"}
"""Marks from Telegram's fixed reaction set, which has neither ✅ nor ❌."""


async def _let_turns_start() -> None:
    """Yield the loop for the turns an update takes to reach its turn, so the next long poll (about 0.3 ms of CPU)
    is written while the model answers the updates just published, not ahead of their model requests."""
    for _ in range(TURN_HOPS):
        await asyncio.sleep(0)


def file_base_url(api_base: str) -> str:
    """Bot API file URL from its method URL: `…/bot` becomes `…/file/bot`."""
    base = api_base.rstrip("/")
    return base[: -len("/bot")] + "/file/bot" if base.endswith("/bot") else base + "/file/bot"


class TelegramChannel(Channel):
    """Long-polls the Bot API, publishes messages (with media), replies in HTML."""

    name: ClassVar[str] = "telegram"

    def __init__(
        self,
        publish: Publish,
        config: TelegramConfig,
        media_dir: Path,
        retry: RetryPolicy | None = None,
        album_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        account: str | None = None,
    ) -> None:
        """`account` names this bot among the platform's (None: the default one); its chats carry it."""
        self.account = account
        self._publish = publish
        self._config = config
        self._media_dir = media_dir
        self._retry = retry or RetryPolicy()
        self._streaming = StreamSettings.of(config)
        self._albums = AlbumGatherer(self._publish_album, sleep=album_sleep)
        self._replies: SentReplies[tuple[str, str]] = SentReplies()
        self._moves = ChatMoves()
        self._app: Any = None
        self._sender: TelegramSender | None = None
        self._poller: asyncio.Task[None] | None = None
        self._fetch_updates: Callable[[int | None, int, list[str]], Awaitable[list[dict[str, Any]]]] | None = None
        self._bot_id = 0
        self._bot_username = ""
        self._group_menu: frozenset[str] = frozenset()  # commands a bare /name in a group may be
        self.liveness = Liveness(config.poll_timeout)

    async def start(self) -> None:
        skip_httpx_cli()
        from telegram.ext import Application

        from channels.telegram.http import AiohttpRequest, RawBotApi

        token = self._config.token.get_secret_value()
        if not token:
            raise ChannelError("channels.telegram.token is empty; set TELEGRAM_BOT_TOKEN or the config key")
        # PTB's two HTTP clients (polling, everything else) on aiohttp, sharing one TLS context.
        tls = client_context()
        requests = (AiohttpRequest(256, tls), AiohttpRequest(1, tls))
        app = (
            Application.builder()
            .token(token)
            .base_url(self._config.api_base)
            .base_file_url(file_base_url(self._config.api_base))
            .request(requests[0])
            .get_updates_request(requests[1])
            .updater(None)
            .build()
        )
        try:
            await self._call(app.initialize)
            # Pending updates are kept: messages sent while the bot was down are answered now.
            await self._call(lambda: app.bot.delete_webhook(drop_pending_updates=False))
        except BaseException:
            await _quietly(app.shutdown)
            for request in requests:  # an app that never finished initializing does not close them
                await _quietly(request.shutdown)
            raise
        self._app = app
        self._fetch_updates = RawBotApi(requests[1], app.bot.base_url).updates
        self._sender = TelegramSender(
            app.bot, RawBotApi(requests[0], app.bot.base_url), self._call, self._retry, self._replies
        )
        self._bot_id = app.bot.id
        self._bot_username = app.bot.username or ""
        self.liveness.beat()
        self._poller = asyncio.create_task(self._poll(), name="telegram-poll")

    async def stop(self) -> None:
        app, self._app = self._app, None
        if app is None:
            return
        if self._poller is not None:
            await cancel_and_wait(self._poller)  # it publishes to the bus, whose redis calls may swallow a cancel
            self._poller = None
        self._app = app  # open albums still download their files
        try:
            await self._albums.flush()
        finally:
            self._app, self._sender = None, None
            await _quietly(app.shutdown)

    async def _poll(self) -> None:
        """Long-poll; the offset moves past an update only once it is journaled, so a crash never loses one.

        Album parts are the exception: each is confirmed on arrival and published with its album a second later."""
        fetch = self._fetch_updates
        assert fetch is not None, "polling starts after start()"
        offset: int | None = None
        failures = 0
        while True:
            try:
                updates = await self._call(partial(fetch, offset, round(self._config.poll_timeout), list(UPDATE_KINDS)))
            except ChannelError as exc:
                failures += 1
                delay = POLL_BACKOFF.delay(min(failures, 8))
                logger.warning("telegram: polling failed (%s); retrying in %.1fs", exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            self.liveness.beat()
            for update in updates:
                try:
                    await self._on_update(update)
                except BusClosed:
                    logger.info("telegram: stopping intake; update %s stays with Telegram", update["update_id"])
                    return
                offset = update["update_id"] + 1
            if updates:
                await _let_turns_start()

    async def send(self, message: OutboundMessage) -> None:
        """Send to the chat where it is now; a chat Telegram moved since is followed and the message sent there."""
        if self._sender is None:
            raise ChannelUnavailable("telegram is not connected")
        sender, chat = self._sender, self._moves.follow(message.chat)
        try:
            await sender.send(message if chat is message.chat else replace(message, chat=chat))
        except ChatMoved as moved:
            self._moves.record(chat.chat_id, moved.new_chat_id)
            await sender.send(replace(message, chat=self._moves.follow(chat)))

    def live_reply(self, chat: ChatRef, reply_to: str | None, recipient: str | None) -> LiveReply | None:
        """A draft bubble in private chats (`streaming: auto`), else an edited message; None when off."""
        chat = self._moves.follow(chat)
        mode = self._streaming.mode
        if mode == "off":
            return None
        if mode == "auto" and int(chat.chat_id) > 0:
            writer: Any = TelegramDraft(self._app.bot, self._call, chat)
        else:
            quote = reply_to if int(chat.chat_id) < 0 else None
            answering = (chat.chat_id, reply_to) if reply_to else None
            edits = TelegramEdits(self._app.bot, self._call, chat, partial(self._note_reply, answering))
            writer = EditedMessages(edits, MAX_MESSAGE_LENGTH, markdown_to_telegram_html, quote, plain=_as_html)
        return LiveReply(writer, self._streaming, self._retry)

    def _note_reply(self, answering: tuple[str, str] | None, message_id: str) -> None:
        """Remember a live reply's message as part of the answer to `answering` (chat, user message), if known."""
        if answering is not None:
            self._replies.add(answering, message_id)

    async def show_typing(self, chat: ChatRef) -> None:
        """Show "typing…" in the chat (Telegram clears it after 5 s or at the next message)."""
        chat = self._moves.follow(chat)
        thread = int(chat.thread_id) if chat.thread_id else None
        await self._call(
            lambda: self._app.bot.send_chat_action(chat_id=int(chat.chat_id), action="typing", message_thread_id=thread)
        )

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        """Mark a user's message 👀 (seen), 👍 (done) or 👎 (failed); a failure is logged, never raised."""
        chat = self._moves.follow(chat)
        number = message_id.split("@")[0]
        if not number.isdigit():
            return  # a button press has no message of its own to mark
        try:
            await self._call(
                lambda: self._app.bot.set_message_reaction(int(chat.chat_id), int(number), REACTIONS[status])
            )
        except ChannelError as exc:
            logger.info("[%s] reaction %s on %s failed: %s", chat.session_key, status, message_id, exc)

    async def set_commands(self, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
        """The command menus for private chats, groups and the privileged, sent only when they differ."""
        self._group_menu = frozenset(c.name.lower() for c in commands if c.scope in ("all", "groups"))
        await offer_commands(self._app.bot, self._call, commands, privileged)

    async def _on_update(self, raw: dict[str, Any]) -> None:
        """Parse, download media, publish (journaled on return); a failure is logged, only BusClosed is raised."""
        if query := raw.get("callback_query"):
            await self._answer_press(query)
        if (notice := message_of(raw)) and "migrate_to_chat_id" in notice:
            self._moves.record(str(notice["chat"]["id"]), str(notice["migrate_to_chat_id"]))
        message = parse_update(raw, self._bot_id, self._bot_username, self._group_menu, self._streaming.mode != "off")
        if message is None:
            return
        message = self.own(message)
        try:
            body = message_of(raw) or {}
            quote_image = replied_image(body)
            media = media_of(body) if message.edit_of is None else None
            if (album := album_of(raw)) is not None:
                self._albums.add(album, AlbumPart(message, media, quote_image))
                return
            await self._publish(await self._with_files(message, [media] if media else [], quote_image))
        except BusClosed:
            raise
        except Exception:
            logger.exception("[%s] could not handle update %s", message.chat.session_key, raw.get("update_id"))

    async def _answer_press(self, query: dict[str, Any]) -> None:
        """Answer a button press at once: Telegram shows a spinner on the button until it is answered."""
        try:
            await self._call(lambda: self._app.bot.answer_callback_query(query["id"]))
        except ChannelError as exc:
            logger.info("telegram: press %s not acknowledged: %s", query.get("id"), exc)

    async def _publish_album(self, parts: list[AlbumPart]) -> None:
        message, media, quote_image = merge_album(parts)
        logger.info("[%s] album of %d parts gathered", message.chat.session_key, len(parts))
        await self._publish(await self._with_files(message, media, quote_image))

    async def _with_files(
        self, message: InboundMessage, media: list[MediaRef], quote_image: MediaRef | None
    ) -> InboundMessage:
        """Download the message's files and the replied-to image; a failed download becomes a note or no image."""
        if media:
            message = await attach_media(message, media, self._media_dir, self._download)
        if quote_image is None or message.reply_to is None:
            return message
        if quote_image.size and quote_image.size > MAX_MEDIA_BYTES:
            return message
        target = self._media_dir / message.chat.folder / quote_image.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self._download(quote_image, target)
        except ChannelError as exc:
            logger.warning("[%s] replied-to image not downloaded: %s", message.chat.session_key, exc)
            return message
        image = Attachment(str(target), quote_image.mime_type, "image")
        return replace(message, reply_to=replace(message.reply_to, image=image))

    async def _download(self, media: MediaRef, target: Path) -> None:
        file = await self._call(lambda: self._app.bot.get_file(media.source))
        await self._call(lambda: file.download_to_drive(custom_path=target))

    async def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run one Bot API call, translating python-telegram-bot's errors into ours."""
        return await call_bot_api(make)


def _as_html(text: str) -> str:
    """Plain text as the HTML Telegram shows identically: an edit between the two changes nothing."""
    import html

    return html.escape(text, quote=False)


async def _quietly(step: Callable[[], Awaitable[object]]) -> None:
    """Run a shutdown step, logging instead of raising so later steps still run."""
    try:
        await step()
    except Exception as exc:
        logger.debug("telegram: shutdown step %s failed: %s", getattr(step, "__name__", step), exc)
