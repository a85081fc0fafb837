"""Delivering an OutboundMessage on Mattermost: markdown posts split at its limit, files, buttons, edits in place."""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import send_in_chunks
from channels.mattermost.buttons import choice_props
from channels.mattermost.calls import MattermostApi
from channels.numbered import numbered_text
from channels.prompt_messages import PromptMessages
from channels.sent_replies import SentReplies

logger = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 4000  # servers take 16,383 characters since 5.0 (4,000 on older schemas); shorter reads better
FILES_PER_POST = 5
Posted = Callable[[str], None]
"""Told the id of each post the bot makes in a thread, so replies there count as mentions."""


def _markdown(text: str) -> str:
    """Mattermost renders the markdown the model writes as it is."""
    return text


class MattermostSender:
    """Sends one bot's outbound messages; `callback` is the gateway URL its buttons call (None: numbered text)."""

    def __init__(self, api: MattermostApi, retry: RetryPolicy, callback: str | None, key: bytes) -> None:
        self._api = api
        self._retry = retry
        self._callback = callback
        self._key = key
        self._replies: SentReplies[str] = SentReplies()
        self._prompts = PromptMessages()

    def remember_reply(self, user_message: str, post_id: str) -> None:
        """Note that post `post_id` is part of the reply to the user's post `user_message`."""
        self._replies.add(user_message, post_id)

    async def send(self, message: OutboundMessage) -> None:
        """Privately where asked and allowed, in place of an earlier post where asked and possible, else anew."""
        message = self._prompts.resolve(message)
        if message.private_to and await self._ephemeral(message, message.private_to):
            return
        targets = [message.edit_of] if message.edit_of else self._replies.of(message.revises_reply_to or "")
        if targets and await self._replace(targets, message):
            return
        if message.files:
            await self._upload(message)
            return
        await self._post(message)

    async def _ephemeral(self, message: OutboundMessage, user_id: str) -> bool:
        """A notice only `user_id` sees; False when the bot may not post those (then everyone sees it)."""
        post = {"channel_id": message.chat.chat_id, "message": message.text[:MAX_MESSAGE_LENGTH]}
        if message.chat.thread_id:
            post["root_id"] = message.chat.thread_id
        try:
            await self._api.create_ephemeral(user_id, post)
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] private notice to %s refused (%s); posting it", message.chat.session_key, user_id, exc)
            return False
        return True

    async def _replace(self, targets: list[str], message: OutboundMessage) -> bool:
        """Patch the first target (buttons replaced or removed), delete the rest; False: send anew."""
        if len(message.text) > MAX_MESSAGE_LENGTH or not message.text.strip():
            return False
        patch = {"message": message.text, "props": self._props(message) or {}}
        try:
            await self._api.patch_post(targets[0], patch)
            for extra in targets[1:]:
                await self._api.delete_post(extra)
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] could not edit %s (%s); sending anew", message.chat.session_key, targets[0], exc)
            return False
        if message.revises_reply_to:
            self._replies.replace(message.revises_reply_to, targets[:1])
        return True

    def _props(self, message: OutboundMessage) -> dict[str, Any] | None:
        if not message.choices or not self._callback:
            return None
        root = message.chat.thread_id
        return choice_props("", message.choices, message.prompt_id or "", self._callback, self._key, root)

    async def _post(self, message: OutboundMessage) -> None:
        props = self._props(message)
        text = numbered_text(message) if message.choices and props is None else message.text
        if props is not None and len(text) <= MAX_MESSAGE_LENGTH:
            await self._retry.run(
                partial(self._create, message, text, props, True),
                f"[{message.chat.session_key}] send {message.id}",
                (ChannelUnavailable,),
            )
            return
        if text.strip():
            chunked = OutboundMessage(message.chat, text, id=message.id)
            post = partial(self._chunk, message)
            await send_in_chunks(chunked, MAX_MESSAGE_LENGTH, _markdown, post, self._retry)
        if props is not None:
            labels = " / ".join(choice.label for choice in message.choices)
            await self._retry.run(
                partial(self._create, message, labels, props, False),
                f"[{message.chat.session_key}] send {message.id} buttons",
                (ChannelUnavailable,),
            )

    async def _chunk(self, message: OutboundMessage, text: str, as_markup: bool, first: bool) -> None:
        await self._create(message, text, None, first)

    async def _create(
        self,
        message: OutboundMessage,
        text: str,
        props: dict[str, Any] | None,
        first: bool,
        files: list[str] | None = None,
    ) -> None:
        body: dict[str, Any] = {"channel_id": message.chat.chat_id, "message": text}
        if message.chat.thread_id:
            body["root_id"] = message.chat.thread_id
        if props:
            body["props"] = props
        if files:
            body["file_ids"] = files
        answer = await self._api.create_post(body)
        post_id = str(answer["id"])
        if message.kind == "reply" and message.reply_to_platform_id:
            self.remember_reply(message.reply_to_platform_id, post_id)
        if props:
            self._prompts.record(message, post_id)

    async def _upload(self, message: OutboundMessage) -> None:
        """Upload the files into the channel, then post them five at a time, the text with the first batch."""
        ids = []
        for file in message.files:
            path = Path(file.path)
            mime = file.mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            ids.append(await self._api.upload(message.chat.chat_id, file.name or path.name, path.read_bytes(), mime))
        text = message.text if len(message.text) <= MAX_MESSAGE_LENGTH else ""
        for start in range(0, len(ids), FILES_PER_POST):
            batch = ids[start : start + FILES_PER_POST]
            await self._create(message, text if start == 0 else "", None, start == 0, batch)
        if message.text and not text:
            await send_in_chunks(message, MAX_MESSAGE_LENGTH, _markdown, partial(self._chunk, message), self._retry)
