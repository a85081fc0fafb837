"""Telegram's JSON objects as the Bot API sends them: users, chats, messages, files and entities."""

from __future__ import annotations

import re
import time
from typing import Any

_COMMAND = re.compile(r"/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?")
_MENTION = re.compile(r"(?<![\w@/])@[A-Za-z0-9_]+")


def user(user_id: int, first_name: str, username: str | None) -> dict:
    """A human user; `username` is left out when None, as Telegram does."""
    fields: dict[str, Any] = {"id": user_id, "is_bot": False, "first_name": first_name, "language_code": "en"}
    if username is not None:
        fields["username"] = username
    return fields


def bot_user(bot_id: int, username: str) -> dict:
    """The bot as a user, as it appears in `from` of its own messages."""
    return {"id": bot_id, "is_bot": True, "first_name": "Relay", "username": username}


def me(bot_id: int, username: str, privacy_mode: bool = True) -> dict:
    """getMe's result: the bot user and its group abilities (privacy mode on: it reads only what is meant for it)."""
    extra = {
        "can_join_groups": True,
        "can_read_all_group_messages": not privacy_mode,
        "supports_inline_queries": False,
    }
    return {**bot_user(bot_id, username), **extra}


def chat(chat_id: int, chat_type: str, sender: dict, is_forum: bool) -> dict:
    """A chat; a private one repeats the sender's names, a group gets a title and `is_forum`."""
    fields: dict[str, Any] = {"id": chat_id, "type": chat_type}
    if chat_type == "private":
        fields.update({k: v for k, v in sender.items() if k in ("first_name", "username")})
    else:
        fields["title"] = "Test group"
        fields["is_forum"] = is_forum
    return fields


def bare_chat(chat_id: Any) -> dict:
    """A chat known only by id: positive int ids are private chats, anything else a supergroup."""
    private = isinstance(chat_id, int) and chat_id > 0
    return {"id": chat_id, "type": "private" if private else "supergroup"}


def user_message(
    message_id: int,
    chat: dict,
    sender: dict,
    content: dict,
    entities_key: str,
    text: str,
    entities: list[dict] | None,
    thread_id: int | None,
) -> dict:
    """A user's message; `text` goes under "text" or "caption" beside `entities` (None: auto_entities)."""
    message = {"message_id": message_id, "date": now(), "chat": chat, "from": sender, **content}
    if text or entities_key == "entities":
        message["text" if entities_key == "entities" else "caption"] = text
    found = auto_entities(text) if entities is None else entities
    if found:
        message[entities_key] = found
    if thread_id is not None:
        message.update(message_thread_id=thread_id, is_topic_message=True)
    return message


def bot_message(
    message_id: int, bot: dict, chat: dict, content: dict, thread_id: int | None, reply_to: dict | None
) -> dict:
    """A message the bot sent; in a thread it is a topic message only if the chat is a forum."""
    message = {"message_id": message_id, "from": bot, "chat": chat, "date": now()}
    if thread_id is not None:
        message.update(message_thread_id=thread_id, is_topic_message=bool(chat.get("is_forum")))
    if reply_to is not None:
        message["reply_to_message"] = reply_to
    return {**message, **content}


def earlier_bot_message(message_id: int, bot: dict, chat: dict) -> dict:
    """A bot message from before the fake started, for a user to reply to."""
    return {"message_id": message_id, "from": bot, "chat": chat, "date": 0, "text": "Earlier reply"}


def as_replied(message: dict) -> dict:
    """`message` as nested in `reply_to_message`: Telegram nests only one level."""
    return {k: v for k, v in message.items() if k != "reply_to_message"}


def file_info(file_id: str, unique_id: str, size: int) -> dict:
    """The fields every file object shares."""
    return {"file_id": file_id, "file_unique_id": unique_id, "file_size": size}


def file(info: dict, path: str) -> dict:
    """getFile's result: the file and its download path."""
    return {**info, "file_path": path}


def photo_size(info: dict, width: int, height: int) -> dict:
    """One size of a photo (a message's `photo` lists them, smallest first)."""
    return {**info, "width": width, "height": height}


def document(info: dict, file_name: str | None, mime_type: str) -> dict:
    """A document: the file with its name and MIME type."""
    return {**info, "file_name": file_name, "mime_type": mime_type}


def voice(info: dict, duration: int) -> dict:
    """A voice note (audio/ogg) lasting `duration` seconds."""
    return {**info, "duration": duration, "mime_type": "audio/ogg"}


def webhook_info(pending: int) -> dict:
    """getWebhookInfo's result for a bot that polls: no webhook URL."""
    return {"url": "", "has_custom_certificate": False, "pending_update_count": pending}


def auto_entities(text: str) -> list[dict]:
    """Entities Telegram adds by itself: a leading /command and @username mentions (UTF-16 offsets)."""
    entities = []
    command = _COMMAND.match(text)
    if command:
        entities.append({"type": "bot_command", "offset": 0, "length": _utf16_len(command.group())})
    for mention in _MENTION.finditer(text, command.end() if command else 0):
        offset = _utf16_len(text[: mention.start()])
        entities.append({"type": "mention", "offset": offset, "length": _utf16_len(mention.group())})
    return entities


def now() -> int:
    """A Telegram date (Unix seconds) for this moment."""
    return int(time.time())


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
