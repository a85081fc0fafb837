"""Telegram's live replies: a draft bubble in private chats, edited messages in groups and topics."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable
from typing import Any

from bot.bus import ChatRef
from bot.errors import NothingToChange
from channels.streaming import PlatformCall

DRAFT_LIMIT = 4096
_draft_ids = itertools.count(1)


class TelegramDraft:
    """A LiveWriter showing the reply in the private chat's draft bubble (sendMessageDraft, Bot API 9.3+)."""

    finishes_in_place = False

    def __init__(self, bot: Any, call: PlatformCall, chat: ChatRef) -> None:
        self._bot = bot
        self._call = call
        self._chat_id = int(chat.chat_id)
        self._thread = int(chat.thread_id) if chat.thread_id else None
        self._draft_id = next(_draft_ids)

    async def show(self, text: str) -> None:
        await self._call(
            lambda: self._bot.send_message_draft(
                chat_id=self._chat_id,
                draft_id=self._draft_id,
                text=text[:DRAFT_LIMIT],
                message_thread_id=self._thread,
            )
        )

    async def finish(self, text: str) -> bool:
        """A draft is only a preview: the final text goes out as one normal message."""
        return False

    async def discard(self) -> None:
        """Telegram drops an abandoned draft by itself."""


class TelegramEdits:
    """EditsMessages for one Telegram chat or forum topic; `on_posted` hears of each message it posts."""

    def __init__(
        self, bot: Any, call: PlatformCall, chat: ChatRef, on_posted: Callable[[str], None] = lambda message_id: None
    ) -> None:
        self._bot = bot
        self._call = call
        self._chat_id = int(chat.chat_id)
        self._thread = int(chat.thread_id) if chat.thread_id else None
        self._on_posted = on_posted

    async def post_text(self, text: str, markup: bool, reply_to: str | None) -> str:
        from telegram import ReplyParameters

        reply = ReplyParameters(int(reply_to), allow_sending_without_reply=True) if reply_to else None
        sent = await self._call(
            lambda: self._bot.send_message(
                chat_id=self._chat_id,
                text=text,
                parse_mode="HTML" if markup else None,
                message_thread_id=self._thread,
                reply_parameters=reply,
            )
        )
        self._on_posted(str(sent.message_id))
        return str(sent.message_id)

    async def edit_text(self, message_id: str, text: str, markup: bool) -> None:
        with contextlib.suppress(NothingToChange):  # the message already reads so
            await self._call(
                lambda: self._bot.edit_message_text(
                    chat_id=self._chat_id,
                    message_id=int(message_id),
                    text=text,
                    parse_mode="HTML" if markup else None,
                )
            )

    async def delete(self, message_id: str) -> None:
        await self._call(lambda: self._bot.delete_message(chat_id=self._chat_id, message_id=int(message_id)))
