"""Sending to Telegram: text in HTML chunks with their buttons, files, and edits of the bot's own messages."""

from __future__ import annotations

import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.bus import OutboundMessage
from bot.errors import ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.formatting import markdown_to_telegram_html, split_for_platform
from channels.prompt_messages import PromptMessages
from channels.sent_replies import SentReplies
from channels.streaming import PlatformCall
from channels.telegram.buttons import inline_keyboard
from channels.telegram.edit import edit_message
from channels.telegram.files import group_upload, upload_groups

if TYPE_CHECKING:
    from channels.telegram.http import RawBotApi

MAX_MESSAGE_LENGTH = 4096
CAPTION_LIMIT = 1024

logger = logging.getLogger(__name__)


class TelegramSender:
    """Delivers outbound messages through one bot; remembers which reply answered which user message."""

    def __init__(
        self, bot: Any, api: RawBotApi, call: PlatformCall, retry: RetryPolicy, replies: SentReplies[tuple[str, str]]
    ) -> None:
        self._bot = bot
        self._api = api
        self._call = call
        self._retry = retry
        self._replies = replies
        self._prompts = PromptMessages()

    async def send(self, message: OutboundMessage) -> None:
        """Deliver one message: in place where it replaces one of the bot's, else as text chunks or files."""
        message = self._prompts.resolve(message)
        if message.edit_of and await self._edit(message, message.edit_of):
            return
        if message.revises_reply_to and await self._revise(message, message.revises_reply_to):
            return
        if message.files:
            await self._send_files(message)
            return
        chat_id = int(message.chat.chat_id)
        thread = int(message.chat.thread_id) if message.chat.thread_id else None
        quote = message.reply_to_platform_id if chat_id < 0 else None
        keyboard = inline_keyboard(message.prompt_id, message.choices)
        single = len(split_for_platform(message.text, MAX_MESSAGE_LENGTH)) == 1
        last_id: list[int] = []

        async def post(text: str, as_markup: bool, first: bool) -> None:
            reply = {"message_id": int(quote), "allow_sending_without_reply": True} if quote and first else None
            fields = {
                "chat_id": chat_id,
                "text": text,
                "parse_mode": "HTML" if as_markup else None,
                "message_thread_id": thread,
                "reply_parameters": reply,
                "reply_markup": keyboard if single else None,
            }
            sent = await self._call(lambda: self._api("sendMessage", fields))
            if message.kind == "reply" and message.reply_to_platform_id:
                self._replies.add((message.chat.chat_id, message.reply_to_platform_id), str(sent["message_id"]))
            last_id[:] = [sent["message_id"]]

        ends = keyboard is None or single  # else the buttons are added under the last part once it is out
        await send_in_chunks(message, MAX_MESSAGE_LENGTH, markdown_to_telegram_html, post, self._retry, ends)
        if not ends and last_id:
            # A long message's buttons go under its last part, added once every part is out.
            await self._call(
                lambda: self._bot.edit_message_reply_markup(
                    chat_id=chat_id, message_id=last_id[0], reply_markup=keyboard
                )
            )
        if last_id:
            self._prompts.record(message, str(last_id[0]))

    async def _edit(self, message: OutboundMessage, message_id: str) -> bool:
        """Replace one of the bot's messages (a decided prompt): its text and buttons; False to send anew."""
        if len(message.text) > MAX_MESSAGE_LENGTH or message.files or not message_id.isdigit():
            return False
        keyboard = inline_keyboard(message.prompt_id, message.choices)
        return await edit_message(
            self._bot, self._call, int(message.chat.chat_id), int(message_id), message.text, keyboard
        )

    async def _revise(self, message: OutboundMessage, user_message_id: str) -> bool:
        """Replace the bot's earlier answer to a user's message in place; False when that answer is not known."""
        chat_id = message.chat.chat_id
        ids = self._replies.of((chat_id, user_message_id))
        pages = split_for_platform(message.text, MAX_MESSAGE_LENGTH)
        if not ids or message.files or len(pages) > len(ids):
            return False
        for reply_id, page in zip(ids, pages, strict=False):
            if not await edit_message(self._bot, self._call, int(chat_id), int(reply_id), page, None):
                return False
        for extra in ids[len(pages) :]:
            await _quietly(partial(self._call, partial(self._bot.delete_message, int(chat_id), int(extra))))
        self._replies.replace((chat_id, user_message_id), ids[: len(pages)])
        return True

    async def _send_files(self, message: OutboundMessage) -> None:
        """Photos (images up to 10 MB) and documents, several of a kind as an album; a caption over Telegram's limit
        goes as text."""
        chat_id = int(message.chat.chat_id)
        thread = int(message.chat.thread_id) if message.chat.thread_id else None
        caption = message.text if len(message.text) <= CAPTION_LIMIT else None
        for index, group in enumerate(upload_groups(message.files)):
            upload = group_upload(self._bot, group, chat_id, caption if index == 0 else None, thread)
            names = ", ".join(Path(file.path).name for file in group)
            await self._retry.run(
                partial(self._call, upload),
                f"[{message.chat.session_key}] upload {names}",
                (ChannelUnavailable,),
            )
        if message.text and caption is None:
            await self.send(replace(message, files=()))


async def _quietly(step: Any) -> None:
    """Best effort: a failure is no reason to fail the message."""
    try:
        await step()
    except Exception as exc:
        logger.debug("telegram: %s failed: %s", getattr(step, "__name__", step), exc)
