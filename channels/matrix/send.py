"""Delivering an OutboundMessage to a Matrix room: chunks with HTML, quotes and threads, files, edits in place."""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import ChatRef, OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import chunk_progress, send_in_chunks
from channels.formatting import markdown_to_telegram_html
from channels.numbered import NumberedChoices
from channels.prompt_messages import PromptMessages
from channels.sent_replies import SentReplies
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 6000
"""Characters per message: an event is at most 65,536 bytes, and the body and its HTML both count."""
HTML = "org.matrix.custom.html"


def event_id_of(platform_id: str) -> str:
    """The event id in a message's platform id (an edit's is `event@timestamp`)."""
    return platform_id.split("@", 1)[0]


def text_content(text: str, as_markup: bool, msgtype: str = "m.text") -> dict[str, Any]:
    """A message's content: the Markdown as `body`, and as HTML in `formatted_body` unless it goes plain."""
    content: dict[str, Any] = {"msgtype": msgtype, "body": text}
    if as_markup:
        content.update({"format": HTML, "formatted_body": markdown_to_telegram_html(text)})
    return content


def relation(chat: ChatRef, quote: str | None) -> dict[str, Any]:
    """`m.relates_to` for a message in `chat`'s thread (if any) that quotes event `quote` (if any)."""
    if chat.thread_id:
        return {
            "rel_type": "m.thread",
            "event_id": chat.thread_id,
            "is_falling_back": quote is None,
            "m.in_reply_to": {"event_id": quote or chat.thread_id},
        }
    return {"m.in_reply_to": {"event_id": quote}} if quote else {}


def replacement(event_id: str, content: dict[str, Any]) -> dict[str, Any]:
    """An `m.replace` edit of `event_id` to `content` (older clients show the `* ` fallback body)."""
    return {
        **content,
        "body": f"* {content['body']}",
        "m.new_content": content,
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }


class MatrixSender:
    """Sends one account's outbound messages and remembers which bot events answered which user event."""

    def __init__(
        self,
        client: Any,
        call: PlatformCall,
        retry: RetryPolicy,
        choices: NumberedChoices,
        is_direct: Callable[[str], bool],
        room_synced: Callable[[str], Awaitable[None]],
    ) -> None:
        self._client = client
        self._room_synced = room_synced
        self._is_direct = is_direct
        self._call = call
        self._retry = retry
        self._choices = choices
        self._replies: SentReplies[str] = SentReplies()
        self._prompts = PromptMessages()

    def remember_reply(self, user_event: str, bot_event: str) -> None:
        """Note that `bot_event` is part of the reply to `user_event`; the oldest are forgotten."""
        self._replies.add(user_event, bot_event)

    async def post(self, chat: ChatRef, content: dict[str, Any], txn: str | None = None) -> str:
        """Send one `m.room.message` (with `txn` a retry is the same event on the homeserver); its event id."""
        relates = content.get("m.relates_to")
        await self._room_synced(chat.chat_id)
        # Encrypted rooms: every device of the members gets the room key, verified or not (see the Matrix docs).
        send = partial(
            self._client.room_send, chat.chat_id, "m.room.message", content, tx_id=txn, ignore_unverified_devices=True
        )
        sent = await self._call(send)
        logger.debug("[%s] sent %s%s", chat.session_key, sent.event_id, " (related)" if relates else "")
        return str(sent.event_id)

    async def edit(self, chat: ChatRef, event_id: str, content: dict[str, Any]) -> None:
        """Replace the text of the bot's event `event_id` with `content` (`m.replace`)."""
        await self.post(chat, replacement(event_id, content))

    async def send(self, message: OutboundMessage) -> None:
        """In place of an earlier message, as uploads, or as new messages, in that order of preference."""
        message = self._prompts.resolve(message)
        targets = self._targets_of(message)
        if targets and await self._replace(targets, message):
            return
        if message.files:
            await self._upload(message)
            return
        await self._post_text(message)

    def _targets_of(self, message: OutboundMessage) -> list[str]:
        if message.edit_of:
            return [message.edit_of]
        if message.revises_reply_to:
            return self._replies.of(event_id_of(message.revises_reply_to))
        return []

    async def _replace(self, targets: list[str], message: OutboundMessage) -> bool:
        """Edit the first target to the new text, redact the rest; False: send anew (too long, or refused)."""
        text = self._choices.shown(message)
        if len(text) > MAX_MESSAGE_LENGTH or not text.strip():
            return False
        chat = message.chat
        try:
            await self.edit(chat, event_id_of(targets[0]), text_content(text, True))
            for extra in targets[1:]:
                await self._call(partial(self._client.room_redact, chat.chat_id, event_id_of(extra)))
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] could not edit %s (%s); sending anew", chat.session_key, targets[0], exc)
            return False
        if message.revises_reply_to:
            self._replies.replace(event_id_of(message.revises_reply_to), targets[:1])
        return True

    async def _post_text(self, message: OutboundMessage) -> None:
        chat = message.chat
        answering = event_id_of(message.reply_to_platform_id) if message.reply_to_platform_id else None
        replying = answering if message.kind == "reply" else None
        quote = replying if replying and (chat.thread_id or not self._is_direct(chat.chat_id)) else None  # DMs unquoted
        shown = replace(message, text=self._choices.shown(message))
        progress = chunk_progress.get()
        index = progress.confirmed if progress else 0  # a resumed send goes on from the chunks delivered before

        async def post(text: str, as_markup: bool, first: bool) -> None:
            nonlocal index
            content = text_content(text, as_markup)
            if related := relation(chat, quote if first else None):
                content["m.relates_to"] = related
            # One transaction id per chunk: a retry after an ambiguous failure is the same event on the homeserver.
            event_id = await self.post(chat, content, txn=f"{message.id}-{index}")
            index += 1
            if replying:
                self.remember_reply(replying, event_id)
            if message.choices:
                self._prompts.record(message, event_id)

        await send_in_chunks(shown, MAX_MESSAGE_LENGTH, lambda text: text, post, self._retry)

    async def _upload(self, message: OutboundMessage) -> None:
        """Each file into the media repository, then an `m.image` or `m.file` event naming it; the text after."""
        chat = message.chat
        for index, file in enumerate(message.files):
            path = Path(file.path)
            mime = file.mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            name = file.name or path.name
            size = path.stat().st_size
            room = self._client.rooms.get(chat.chat_id)
            sealed = bool(room is not None and room.encrypted)  # an encrypted room gets an encrypted file
            with path.open("rb") as data:
                uploaded, keys = await self._call(
                    partial(self._client.upload, data, content_type=mime, filename=name, filesize=size, encrypt=sealed)
                )
            content: dict[str, Any] = {
                "msgtype": "m.image" if mime.startswith("image/") else "m.file",
                "body": name,
                "filename": name,
                "info": {"mimetype": mime, "size": size},
            }
            if keys:
                content["file"] = {**keys, "url": uploaded.content_uri}
            else:
                content["url"] = uploaded.content_uri
            if related := relation(chat, None):
                content["m.relates_to"] = related
            await self.post(chat, content, txn=f"{message.id}-file-{index}")
        if message.text.strip():
            await self._post_text(replace(message, files=()))
