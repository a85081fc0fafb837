"""Discord's deliveries: to a channel, through the interaction being answered, or as edits of the bot's messages."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.delivery import chunk_progress, send_in_chunks
from channels.discord.buttons import choice_view
from channels.discord.replies import OpenInteraction, OpenInteractions
from channels.formatting import split_for_platform
from channels.prompt_messages import PromptMessages
from channels.sent_replies import SentReplies
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

MAX_MESSAGE_LENGTH = 2000


def chunk_nonce(message_id: str, index: int) -> str:
    """A nonce per chunk: with enforce_nonce, Discord creates a retried chunk once (at most 25 characters)."""
    digest = hashlib.blake2b(f"{message_id}/{index}".encode(), digest_size=8).digest()
    return str(int.from_bytes(digest, "big"))


def as_discord_markdown(text: str) -> str:
    """Discord renders Markdown itself, so replies pass through unchanged."""
    return text


class DiscordSender:
    """Delivers OutboundMessages for one client; buttons go on the last chunk, replies are remembered for revisions."""

    def __init__(
        self,
        client: Any,
        call: PlatformCall,
        retry: RetryPolicy,
        interactions: OpenInteractions,
        replies: SentReplies[str],
    ) -> None:
        self._client = client
        self._call = call
        self._retry = retry
        self._interactions = interactions
        self._replies = replies
        self._prompts = PromptMessages()

    async def send(self, message: OutboundMessage) -> None:
        """Pick the way: a private notice, an edit in place, an answer through an open interaction, or a post."""
        message = self._prompts.resolve(message)
        key = message.chat.session_key
        if message.files:
            await self._send_files(message)
        elif message.private_to and (opened := self._interactions.of_user(key, message.private_to)):
            await self._through(opened, message, ephemeral=True)
        elif await self._replaced_in_place(message):
            return
        elif message.reply_to_platform_id and (opened := self._interactions.get(message.reply_to_platform_id)):
            await self._through(opened, message, ephemeral=False)
        else:
            await self._post(message)

    async def withdraw(self, interaction_id: str) -> None:
        """Delete the "thinking…" response of a slash command no answer will fill; presses and messages show none."""
        opened = self._interactions.get(interaction_id)
        if opened is None or not opened.is_command or opened.answered:
            return
        opened.answered = True
        try:
            await self._call(opened.interaction.delete_original_response)
        except ChannelError as exc:
            logger.info("[%s] could not withdraw the response to %s: %s", opened.session_key, interaction_id, exc)

    async def _replaced_in_place(self, message: OutboundMessage) -> bool:
        """Whether `edit_of` or `revises_reply_to` named a message that could be edited (and now is)."""
        if message.edit_of:
            return await self._edit(message, message.edit_of)
        if message.revises_reply_to:
            return await self._revise(message, message.revises_reply_to)
        return False

    def _target(self, message: OutboundMessage) -> Any:
        return self._client.get_partial_messageable(int(message.chat.thread_id or message.chat.chat_id))

    def _view(self, message: OutboundMessage) -> Any:
        return choice_view(message.prompt_id or message.id, message.choices) if message.choices else None

    async def _post(self, message: OutboundMessage) -> None:
        """New messages in the chat, the first one a reply to the user's; buttons under the last."""
        target = self._target(message)
        answered = message.revises_reply_to or message.reply_to_platform_id
        reference = None
        if message.reply_to_platform_id:
            answered_message = target.get_partial_message(int(message.reply_to_platform_id))
            reference = answered_message.to_reference(fail_if_not_exists=False)
        progress = chunk_progress.get()
        posted = progress.confirmed if progress else 0  # the chunk index, so a resumed send keeps each nonce
        last = len(split_for_platform(message.text, MAX_MESSAGE_LENGTH)) - 1
        view = self._view(message)

        async def post(text: str, as_markup: bool, first: bool) -> None:
            nonlocal posted
            nonce = chunk_nonce(message.id, posted)
            extra = {"view": view} if view is not None and posted == last else {}
            ref = reference if first else None
            sent = await self._call(lambda: target.send(text, reference=ref, nonce=nonce, **extra))
            if answered:
                self._replies.add(answered, str(sent.id))
            if extra:
                self._prompts.record(message, str(sent.id))
            posted += 1

        await send_in_chunks(message, MAX_MESSAGE_LENGTH, as_discord_markdown, post, self._retry)

    async def _through(self, opened: OpenInteraction, message: OutboundMessage, ephemeral: bool) -> None:
        """Answer an interaction: a command's first chunk fills its deferred response, the rest are follow-ups."""
        interaction = opened.interaction
        pages = split_for_platform(message.text, MAX_MESSAGE_LENGTH)
        view = self._view(message)
        posted = 0

        async def post(text: str, as_markup: bool, first: bool) -> None:
            nonlocal posted
            extra = {"view": view} if view is not None and posted == len(pages) - 1 else {}
            if opened.is_command and not opened.answered:
                sent = await self._call(lambda: interaction.edit_original_response(content=text, **extra))
                opened.answered = True
            else:
                sent = await self._call(
                    lambda: interaction.followup.send(text, ephemeral=ephemeral, wait=True, **extra)
                )
            if extra and not ephemeral and sent is not None:
                self._prompts.record(message, str(sent.id))
            posted += 1

        await send_in_chunks(message, MAX_MESSAGE_LENGTH, as_discord_markdown, post, self._retry)

    async def _edit(self, message: OutboundMessage, message_id: str) -> bool:
        """Replace one of the bot's messages, buttons gone (or new ones); False when it cannot be edited."""
        text = message.text if len(message.text) <= MAX_MESSAGE_LENGTH else message.text[: MAX_MESSAGE_LENGTH - 1] + "…"
        view = self._view(message)
        pressed = self._interactions.on_message(message_id)
        try:
            if pressed is not None:
                await self._call(lambda: pressed.interaction.edit_original_response(content=text, view=view))
            else:
                old = self._target(message).get_partial_message(int(message_id))
                await self._call(lambda: old.edit(content=text, view=view))
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info("[%s] cannot edit %s (%s); sending anew", message.chat.session_key, message_id, exc)
            return False
        return True

    async def _revise(self, message: OutboundMessage, user_message_id: str) -> bool:
        """Rewrite the bot's earlier reply to `user_message_id` in place; False when that reply is unknown."""
        ids = self._replies.of(user_message_id)
        if not ids:
            return False
        target = self._target(message)
        pages = split_for_platform(message.text, MAX_MESSAGE_LENGTH)
        view = self._view(message)
        try:
            for index, page in enumerate(pages):
                extra = view if index == len(pages) - 1 else None
                if index < len(ids):
                    old = target.get_partial_message(int(ids[index]))
                    await self._call(partial(old.edit, content=page, view=extra))
                else:
                    sent = await self._call(partial(target.send, page, **({"view": extra} if extra else {})))
                    ids.append(str(sent.id))
            for surplus in ids[len(pages) :]:
                await self._call(target.get_partial_message(int(surplus)).delete)
        except ChannelUnavailable:
            raise
        except ChannelError as exc:
            logger.info(
                "[%s] cannot revise the reply to %s (%s); sending anew", message.chat.session_key, user_message_id, exc
            )
            return False
        self._replies.replace(user_message_id, ids[: len(pages)])
        return True

    async def _send_files(self, message: OutboundMessage) -> None:
        """The files as attachments of one message, the caption as its content (split off when too long)."""
        import discord

        target = self._target(message)
        caption = message.text if len(message.text) <= MAX_MESSAGE_LENGTH else None
        files = [discord.File(file.path, filename=Path(file.path).name) for file in message.files]
        nonce = chunk_nonce(message.id, 0)
        await self._call(lambda: target.send(caption or None, files=files, nonce=nonce))
        if message.text and caption is None:
            await self.send(replace(message, files=(), id=f"{message.id}-caption"))
