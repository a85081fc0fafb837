"""Discord's one place where gateway events become bus messages: messages, edits, commands and button presses."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.bus import Attachment, InboundMessage
from bot.errors import ChannelError
from channels.base import Publish
from channels.catchup import CATCH_UP_LIMIT, RecentChats
from channels.discord.calls import call_discord, translate_error
from channels.discord.interactions import APPLICATION_COMMAND, DiscordInteraction, parse_interaction
from channels.discord.parse import DiscordMessage, parse_edit, parse_message, quoted_image
from channels.discord.replies import OpenInteractions
from channels.media import MAX_MEDIA_BYTES, Fetch, MediaRef, attach_media

logger = logging.getLogger(__name__)


class DiscordInbound:
    """discord.py's event handlers: parse, fetch what the gateway left out, acknowledge, publish; never raise."""

    def __init__(
        self,
        publish: Publish,
        media_dir: Path,
        interactions: OpenInteractions,
        stream: bool,
        own: Callable[[InboundMessage], InboundMessage] = lambda message: message,
    ) -> None:
        """`own` marks a parsed message as this bot's (its account), before anything keys on its chat."""
        self._publish = publish
        self._own = own
        self._media_dir = media_dir
        self._interactions = interactions
        self._stream = stream
        self.client: Any = None
        self.active: RecentChats | None = None

    async def on_message(self, raw: Any) -> None:
        """MESSAGE_CREATE: the message with its attachments, and the message it replies to (fetched if need be)."""
        message = DiscordMessage.from_discord(raw)
        replied_raw = raw.reference.resolved if message.replied is not None else None
        if message.reference_id is not None and message.replied is None and not message.author_is_bot:
            replied_raw = await self._fetch(raw.channel, message.reference_id)
            if replied_raw is not None:
                message = replace(message, replied=DiscordMessage.from_discord(replied_raw, nested=True))
        inbound = parse_message(message, self.client.user.id)
        if inbound is None:
            return
        inbound = self._own(replace(inbound, stream=self._stream))
        try:
            if message.files:
                inbound = await attach_media(inbound, message.files, self._media_dir, self._saver(raw))
            if inbound.reply_to is not None and message.replied is not None and replied_raw is not None:
                inbound = await self._with_quoted_image(inbound, message.replied, replied_raw)
            await self._publish(inbound)
        except Exception:
            logger.exception("[%s] could not handle message %s", inbound.chat.session_key, message.id)
        if self.active is not None and inbound.is_direct:
            self.active.seen(inbound.chat, str(message.id))

    async def on_edit(self, event: Any) -> None:
        """MESSAGE_UPDATE: a user's edit, as `edit_of` the original with a versioned id (never a new message)."""
        inbound = parse_edit(DiscordMessage.from_discord(event.message), self.client.user.id)
        if inbound is None:
            return
        try:
            await self._publish(self._own(replace(inbound, stream=self._stream)))
        except Exception:
            logger.exception("[%s] could not handle the edit of %s", inbound.chat.session_key, inbound.edit_of)

    async def on_interaction(self, interaction: Any) -> None:
        """INTERACTION_CREATE: acknowledge within Discord's 3 s (deferred), then publish the command or press."""
        data = DiscordInteraction.from_discord(interaction)
        inbound = parse_interaction(data, self.client.user.id)
        if inbound is None:
            return
        inbound = self._own(inbound)
        is_command = data.type == APPLICATION_COMMAND
        key = inbound.chat.session_key
        try:
            # A command shows "thinking…" until its answer fills the response; a press just stops the spinner.
            await call_discord(lambda: interaction.response.defer(thinking=is_command))
        except ChannelError as exc:
            logger.warning("[%s] could not acknowledge interaction %s: %s", key, data.id, exc)
            return
        message_id = str(data.message_id) if data.message_id is not None else None
        self._interactions.add(interaction, key, inbound.sender_id, message_id, is_command)
        try:
            # An answer goes out through the interaction, as one message; no live edits of a channel message.
            await self._publish(replace(inbound, stream=False))
        except Exception:
            logger.exception("[%s] could not handle interaction %s", key, data.id)

    async def catch_up(self) -> None:
        """Publish, in order, up to CATCH_UP_LIMIT messages per recent DM sent after the last one seen."""
        import discord

        for active in self.active.recent() if self.active else []:
            target = self.client.get_partial_messageable(int(active.chat.chat_id))
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
                await self.on_message(raw)

    async def _fetch(self, channel: Any, message_id: int) -> Any:
        """The replied-to message the gateway did not resolve; None when it cannot be read."""
        try:
            return await call_discord(lambda: channel.fetch_message(message_id))
        except ChannelError as exc:
            logger.info("discord: could not fetch replied-to message %s: %s", message_id, exc)
            return None

    async def _with_quoted_image(self, inbound: InboundMessage, replied: DiscordMessage, raw: Any) -> InboundMessage:
        """The quote with its first image, saved beside the chat's other files; the quote alone when that fails."""
        image = quoted_image(replied)
        if image is None or inbound.reply_to is None or (image.size or 0) > MAX_MEDIA_BYTES:
            return inbound
        target = self._media_dir / inbound.chat.folder / image.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self._saver(raw)(image, target)
        except ChannelError as exc:
            logger.warning("[%s] could not download the quoted image: %s", inbound.chat.session_key, exc)
            return inbound
        quote = replace(inbound.reply_to, image=Attachment(str(target), image.mime_type, "image"))
        return replace(inbound, reply_to=quote)

    def _saver(self, raw: Any) -> Fetch:
        """Download for a message's attachments, through discord.py (so the CDN URL it was given)."""
        attachments = {str(attachment.id): attachment for attachment in raw.attachments}

        async def save(media: MediaRef, target: Path) -> None:
            await call_discord(lambda: attachments[media.source].save(target))

        return save
