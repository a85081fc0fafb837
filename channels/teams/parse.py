"""Teams activities as bus messages, pure: personal chats, channel and group-chat mentions, card presses, files."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, InboundMessage, Press, Quote
from channels.media import MediaRef, kind_of

CHANNEL = "teams"
FILE_DOWNLOAD = "application/vnd.microsoft.teams.file.download.info"
THREAD_MARK = ";messageid="
PRESS_KEY = "relaybot"
"""The key of an Adaptive Card's Action.Submit data that relaybot renders: `{"relaybot": [prompt id, choice id]}`."""
_AT = re.compile(r"<at[^>]*>(.*?)</at>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


class MalformedActivity(ValueError):
    """An activity that is not the Bot Connector's shape; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Incoming:
    """One user message: the bus message, its files (not yet downloaded), and where replies go."""

    message: InboundMessage
    media: tuple[MediaRef, ...] = ()


def conversation_of(chat: ChatRef) -> str:
    """The Connector's conversation id for a chat: a channel thread's root message id rejoined to the channel's."""
    return f"{chat.chat_id}{THREAD_MARK}{chat.thread_id}" if chat.thread_id else chat.chat_id


def parse_activity(activity: dict[str, Any]) -> Incoming | None:
    """A `message` activity as an Incoming; None for other types, the bot's own, and empty ones."""
    if activity.get("type") != "message":
        return None
    try:
        sender, recipient = activity["from"], activity["recipient"]
        conversation = activity["conversation"]
        conversation_id = str(conversation["id"])
        message_id = str(activity["id"])
    except (KeyError, TypeError) as exc:
        raise MalformedActivity(f"missing field {exc}") from exc
    if sender.get("id") == recipient.get("id"):
        return None
    chat_id, _, thread = conversation_id.partition(THREAD_MARK)
    kind = conversation.get("conversationType") or ("groupChat" if conversation.get("isGroup") else "personal")
    direct = kind == "personal"
    bot_id = str(recipient.get("id") or "")
    mentioned = direct or any(
        entity.get("type") == "mention" and (entity.get("mentioned") or {}).get("id") == bot_id
        for entity in activity.get("entities") or []
    )
    press = _press_of(activity.get("value"), activity.get("replyToId"))
    text = plain_text(str(activity.get("text") or ""), str(recipient.get("name") or ""))
    if press is not None:
        text = str((activity.get("value") or {}).get("label") or press.choice_id)
        mentioned = True
    media = tuple(ref for raw in activity.get("attachments") or [] if (ref := _media_of(raw)) is not None)
    if not text.strip() and not media:
        return None
    team = (activity.get("channelData") or {}).get("team") or {}
    reply_to = activity.get("replyToId") if press is None and not thread else None
    return Incoming(
        InboundMessage(
            chat=ChatRef(CHANNEL, chat_id, thread or None),
            sender_id=str(sender.get("id") or ""),
            text=text,
            sender_name=sender.get("name") or None,
            is_direct=direct,
            mentioned=mentioned,
            platform_message_id=message_id,
            server_id=team.get("id") or (None if direct else chat_id),
            reply_to=Quote("", platform_message_id=str(reply_to)) if reply_to else None,
            press=press,
        ),
        media,
    )


def plain_text(text: str, bot_name: str) -> str:
    """The message's text without the bot's own `<at>` mention, tags and entities (Teams sends a little HTML)."""
    text = _AT.sub(lambda at: "" if at.group(1).strip() == bot_name else at.group(1), text)
    return html.unescape(_TAG.sub("", text)).strip()


def choice_data(prompt_id: str | None, choice_id: str, label: str) -> dict[str, Any]:
    """The data of an Action.Submit button, which comes back as the `value` of its press."""
    return {PRESS_KEY: [prompt_id or "", choice_id], "label": label}


def _press_of(value: Any, reply_to_id: Any) -> Press | None:
    if not isinstance(value, dict):
        return None
    ids = value.get(PRESS_KEY)
    if not isinstance(ids, list) or len(ids) != 2:
        return None
    return Press(str(ids[0]), str(ids[1]), str(reply_to_id) if reply_to_id else None)


def _media_of(raw: dict[str, Any]) -> MediaRef | None:
    """A file a user sent: Teams' download info (a pre-authorised URL) or an inline image (the bot's token)."""
    content_type = str(raw.get("contentType") or "")
    if content_type == FILE_DOWNLOAD:
        content = raw.get("content") or {}
        url = str(content.get("downloadUrl") or "")
        name = str(raw.get("name") or "file")
        mime = _mime_of(str(content.get("fileType") or ""))
        return MediaRef(url, str(content.get("uniqueId") or url), kind_of(mime), mime, None, name) if url else None
    if content_type.startswith("image/") and raw.get("contentUrl"):
        url = str(raw["contentUrl"])
        return MediaRef(url, url, "image", content_type, None, raw.get("name") or None)
    return None


def _mime_of(file_type: str) -> str:
    import mimetypes

    return (
        mimetypes.types_map.get(f".{file_type.lower()}", "application/octet-stream")
        if file_type
        else ("application/octet-stream")
    )
