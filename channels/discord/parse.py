"""Discord messages as plain data, and the pure parse from them to InboundMessages (new messages, edits, quotes)."""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.bus import ChatRef, InboundMessage, Quote
from channels.media import MediaRef, kind_of

USER_MESSAGE_TYPES = frozenset({0, 19})  # default and reply; the others are notices (joins, pins, thread starts)
QUOTE_LIMIT = 1000
_USER_MENTION = re.compile(r"<@!?(\d+)>")
_REPLY_REFERENCE = 0  # MessageReferenceType.default; 1 is a forward
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class DiscordMessage:
    """What the adapter reads from a discord.Message, as plain data; `thread_parent_id` is set in threads.

    `reference_id` names the message this one replies to; `replied` is that message when the gateway resolved it
    (or the adapter fetched it). `edited_at` (microseconds since 1970) is set once the author edited the message.
    """

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
    files: tuple[MediaRef, ...] = ()
    reference_id: int | None = None
    replied: DiscordMessage | None = None
    edited_at: int | None = None

    @classmethod
    def from_discord(cls, message: Any, nested: bool = False) -> DiscordMessage:
        """Read a discord.Message; threads are known from discord.py's cache (THREAD_CREATE, GUILD_CREATE)."""
        from discord import DeletedReferencedMessage, Message, Thread

        channel = message.channel
        reference = message.reference
        reference_id = None
        if reference is not None and reference.type.value == _REPLY_REFERENCE and not nested:
            reference_id = reference.message_id
        resolved = reference.resolved if reference_id is not None else None
        if isinstance(resolved, DeletedReferencedMessage):
            reference_id = None  # nothing left to quote or fetch
        edited = message.edited_at
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
            files=tuple(
                attachment_ref(a.id, a.filename, a.content_type, a.size, a.is_voice_message())
                for a in message.attachments
            ),
            reference_id=reference_id,
            replied=cls.from_discord(resolved, nested=True) if isinstance(resolved, Message) else None,
            edited_at=(edited - _EPOCH) // timedelta(microseconds=1) if edited is not None else None,
        )


def attachment_ref(attachment_id: int, filename: str, content_type: str | None, size: int, is_voice: bool) -> MediaRef:
    """A Discord attachment as a MediaRef; the type comes from Discord, else from the file name."""
    mime = (content_type or "").split(";")[0].strip() or mimetypes.guess_type(filename)[0] or "application/octet-stream"
    kind = "voice" if is_voice else kind_of(mime)
    return MediaRef(str(attachment_id), str(attachment_id), kind, mime, size, filename)


def chat_of(channel_id: int, thread_parent_id: int | None) -> ChatRef:
    """A channel, or a thread as a session of its own under its parent channel."""
    if thread_parent_id is not None:
        return ChatRef("discord", str(thread_parent_id), str(channel_id))
    return ChatRef("discord", str(channel_id))


def parse_message(message: DiscordMessage, bot_id: int) -> InboundMessage | None:
    """Turn a Discord message into an InboundMessage; None for bots (this one too) and notices.

    Guild messages that do not mention the bot are published too, with `mentioned=False`: the access policy
    decides whether they are answered or kept as group context.
    """
    if message.author_is_bot or message.author_id == bot_id or message.type not in USER_MESSAGE_TYPES:
        return None
    text = readable_text(message.content, dict(message.mentions), bot_id)
    if not text and not message.files:
        return None
    replied = message.replied
    mentioned = any(user_id == bot_id for user_id, _ in message.mentions) or (
        replied is not None and replied.author_id == bot_id
    )
    return InboundMessage(
        chat=chat_of(message.channel_id, message.thread_parent_id),
        sender_id=str(message.author_id),
        sender_name=message.author_name,
        text=text,
        is_direct=message.guild_id is None,
        mentioned=mentioned,
        platform_message_id=str(message.id),
        server_id=str(message.guild_id) if message.guild_id is not None else None,
        reply_to=quote_of(replied, bot_id) if replied is not None else None,
    )


def parse_edit(message: DiscordMessage, bot_id: int) -> InboundMessage | None:
    """A MESSAGE_UPDATE as the edit of a user's message; None when no one edited it (an embed was resolved)."""
    if message.edited_at is None:
        return None
    inbound = parse_message(replace(message, files=()), bot_id)
    if inbound is None:
        return None
    return replace(inbound, edit_of=str(message.id), platform_message_id=f"{message.id}@{message.edited_at}")


def quote_of(replied: DiscordMessage, bot_id: int) -> Quote:
    """The replied-to message as a Quote: its text cut at QUOTE_LIMIT characters and who wrote it."""
    text = readable_text(replied.content, dict(replied.mentions), bot_id)
    if len(text) > QUOTE_LIMIT:
        text = text[: QUOTE_LIMIT - 1] + "…"
    return Quote(
        text=text,
        author_id=str(replied.author_id),
        author_name=replied.author_name,
        from_bot=replied.author_id == bot_id,
        platform_message_id=str(replied.id),
    )


def quoted_image(replied: DiscordMessage) -> MediaRef | None:
    """The first image of the replied-to message, which the model sees with the quote."""
    return next((file for file in replied.files if file.kind == "image"), None)


def readable_text(content: str, names: dict[int, str], bot_id: int) -> str:
    """Drop the bot's own `<@id>` mention and show other mentioned users as @name."""
    content = re.sub(rf"[ \t]*<@!?{bot_id}>", "", content)
    return _USER_MENTION.sub(lambda m: f"@{names[int(m[1])]}" if int(m[1]) in names else m[0], content).strip()
