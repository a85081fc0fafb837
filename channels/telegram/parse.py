"""Bot API updates as bus messages: pure functions from Telegram's JSON to InboundMessage, tested on their own."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Literal

from bot.bus import ChatRef, InboundMessage, Press, Quote
from channels.media import MediaRef, kind_of

QUOTE_LIMIT = 1000
UPDATE_KINDS = ("message", "edited_message", "callback_query")
"""The update kinds the adapter asks for in `allowed_updates`."""

_MEDIA_FIELDS: tuple[tuple[str, Literal["file", "voice"], str], ...] = (
    ("document", "file", "application/octet-stream"),
    ("voice", "voice", "audio/ogg"),
    ("audio", "file", "audio/mpeg"),
    ("video", "file", "video/mp4"),
)
"""The message fields that carry a file other than a photo: field, kind, the MIME type when none is given."""


def parse_update(
    raw: dict[str, Any], bot_id: int, bot_username: str, menu: frozenset[str] = frozenset(), stream: bool = False
) -> InboundMessage | None:
    """Turn a Bot API update into an InboundMessage; None for anything that is not a user's message, edit or press.

    `menu` names the commands the bot offers in groups: a bare `/name` from it is addressed to the bot; `stream`
    asks for the reply live."""
    if query := raw.get("callback_query"):
        press = parse_press(query)
        return replace(press, stream=stream) if press is not None and stream else press
    if edited := raw.get("edited_message"):
        message = _parse_message(edited, bot_id, bot_username, menu, stream)
        if message is None:
            return None
        version = edited.get("edit_date") or raw.get("update_id")
        edit_id = f"{edited['message_id']}@{version}"  # a new id per version: dedupe never swallows an edit
        return replace(message, edit_of=message.platform_message_id, platform_message_id=edit_id)
    if message := raw.get("message"):
        return _parse_message(message, bot_id, bot_username, menu, stream)
    return None


def message_of(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The message an update carries (new or edited), or None."""
    found = raw.get("message") or raw.get("edited_message")
    return found if isinstance(found, dict) else None


def album_of(raw: dict[str, Any]) -> str | None:
    """The album (`media_group_id`) a new message belongs to; edits are never gathered."""
    group = (raw.get("message") or {}).get("media_group_id")
    return str(group) if group else None


def media_of(message: dict[str, Any]) -> MediaRef | None:
    """The photo (largest size), document, voice note, audio or video a message carries."""
    if photos := message.get("photo"):
        best = photos[-1]
        return MediaRef(best["file_id"], best["file_unique_id"], "image", "image/jpeg", best.get("file_size"))
    for key, kind, default_mime in _MEDIA_FIELDS:
        if item := message.get(key):
            mime = item.get("mime_type") or default_mime
            return MediaRef(
                item["file_id"],
                item["file_unique_id"],
                kind_of(mime) if kind == "file" else kind,
                mime,
                item.get("file_size"),
                item.get("file_name"),
            )
    return None


def replied_image(message: dict[str, Any]) -> MediaRef | None:
    """The image of the message this one replies to, if it has one."""
    replied = _replied(message)
    media = media_of(replied) if replied else None
    return media if media is not None and media.kind == "image" else None


def parse_press(query: dict[str, Any]) -> InboundMessage | None:
    """A button press (`callback_query` on one of our `prompt_id:choice_id` buttons); the text is the button's label."""
    prompt_id, colon, choice_id = str(query.get("data") or "").partition(":")
    message, sender = query.get("message") or {}, query.get("from") or {}
    if not colon or not message.get("chat") or not sender:
        return None
    chat = message["chat"]
    thread = message.get("message_thread_id") if message.get("is_topic_message") else None
    return InboundMessage(
        chat=ChatRef("telegram", str(chat["id"]), str(thread) if thread else None),
        sender_id=str(sender["id"]),
        sender_name=_name_of(sender),
        text=_label_of(message, str(query["data"])) or choice_id,
        is_direct=chat.get("type") == "private",
        mentioned=True,  # a press answers the bot's own message
        platform_message_id=f"press:{query['id']}",
        server_id=str(chat["id"]),
        press=Press(prompt_id, choice_id, str(message["message_id"])),
    )


def _parse_message(
    message: dict[str, Any], bot_id: int, bot_username: str, menu: frozenset[str], stream: bool
) -> InboundMessage | None:
    sender = message.get("from")
    if not sender or sender.get("is_bot"):
        return None
    text = message.get("text") or message.get("caption") or ""
    if not text and media_of(message) is None:
        return None
    entities = message.get("entities") or message.get("caption_entities") or []
    chat = message["chat"]
    thread = message.get("message_thread_id") if message.get("is_topic_message") else None
    handle = f"@{bot_username}".lower()
    replied = _replied(message)
    mentioned = (
        _mentions(text, entities, handle, bot_id)
        or _menu_command(text, entities, menu)
        or ((replied or {}).get("from") or {}).get("id") == bot_id
    )
    return InboundMessage(
        chat=ChatRef("telegram", str(chat["id"]), str(thread) if thread else None),
        sender_id=str(sender["id"]),
        sender_name=_name_of(sender),
        text=_strip_handle(text, handle),
        is_direct=chat.get("type") == "private",
        mentioned=mentioned,
        platform_message_id=str(message["message_id"]),
        server_id=str(chat["id"]),  # a Telegram group is its own server
        reply_to=quote_of(message, bot_id),
        stream=stream,
    )


def quote_of(message: dict[str, Any], bot_id: int) -> Quote | None:
    """What a message replies to: the quoted part when the user picked one, else the whole replied-to text."""
    replied = _replied(message)
    partial = (message.get("quote") or {}).get("text")
    if replied is None:
        external = message.get("external_reply")
        if external is None or not partial:
            return None
        return Quote(_capped(partial), author_name=_origin_name(external.get("origin") or {}))
    author = replied.get("from") or {}
    text = partial or replied.get("text") or replied.get("caption") or ""
    return Quote(
        text=_capped(text),
        author_id=str(author["id"]) if author.get("id") is not None else None,
        author_name=_name_of(author) if author else (replied.get("sender_chat") or {}).get("title"),
        from_bot=author.get("id") == bot_id,
        platform_message_id=str(replied["message_id"]),
    )


def _replied(message: dict[str, Any]) -> dict[str, Any] | None:
    """The replied-to message; in a forum topic every message "replies" to the topic's root, which is no reply."""
    replied = message.get("reply_to_message")
    if not replied or "forum_topic_created" in replied:
        return None
    return replied if isinstance(replied, dict) else None


def _capped(text: str) -> str:
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 1] + "…"


def _name_of(user: dict[str, Any]) -> str | None:
    full = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p)
    return full or user.get("username")


def _origin_name(origin: dict[str, Any]) -> str | None:
    """Who wrote a message from another chat (`MessageOrigin`): a user, a hidden user's name, or a chat."""
    if user := origin.get("sender_user"):
        return _name_of(user)
    return origin.get("sender_user_name") or (origin.get("sender_chat") or origin.get("chat") or {}).get("title")


def _label_of(message: dict[str, Any], data: str) -> str | None:
    """The label of the button carrying `data` in the message's inline keyboard."""
    rows = (message.get("reply_markup") or {}).get("inline_keyboard") or []
    return next((b.get("text") for row in rows for b in row if b.get("callback_data") == data), None)


def _mentions(text: str, entities: list[dict[str, Any]], handle: str, bot_id: int) -> bool:
    """Whether an entity names the bot; Telegram counts offsets in UTF-16 code units."""
    units = text.encode("utf-16-le")
    for entity in entities:
        start, end = entity["offset"] * 2, (entity["offset"] + entity["length"]) * 2
        chunk = units[start:end].decode("utf-16-le", errors="replace").lower()
        if entity["type"] == "mention" and chunk == handle:
            return True
        if entity["type"] == "bot_command" and chunk.endswith(handle):
            return True
        if entity["type"] == "text_mention" and entity.get("user", {}).get("id") == bot_id:
            return True
    return False


def _menu_command(text: str, entities: list[dict[str, Any]], menu: frozenset[str]) -> bool:
    """Whether the message opens with a bare `/name` from the bot's menu: Telegram sends a tap on the menu without
    `@botname` when the bot is the group's only bot (and with privacy mode on, delivers it to that bot)."""
    for entity in entities:
        if entity["type"] == "bot_command" and entity["offset"] == 0:
            name = text[1 : entity["length"]]  # a command is ASCII, so UTF-16 units are characters here
            return "@" not in name and name.lower() in menu
    return False


def _strip_handle(text: str, handle: str) -> str:
    """Remove the bot's @handle from the text (so `/new@bot` reads `/new`)."""
    return re.sub(r"\s*" + re.escape(handle) + r"\b", "", text, flags=re.IGNORECASE).strip()
