"""signal-cli's `receive` events as InboundMessages, and the ids relaybot gives Signal's chats and messages."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, InboundMessage, Quote
from channels.media import MediaRef, kind_of

CHANNEL = "signal"
MENTION_MARK = "\ufffc"  # where a mention sits in the text; the mention entry says whom it names
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Me:
    """Who the bot is on Signal: its number, its ACI (uuid, when known) and the name people call it by."""

    number: str
    uuid: str = ""
    name: str = ""

    def is_me(self, number: str | None, uuid: str | None) -> bool:
        """Whether a number or uuid (either may be missing) is the bot's."""
        return bool(number and number == self.number) or bool(uuid and self.uuid and uuid == self.uuid)


@dataclass(frozen=True, slots=True)
class Incoming:
    """A person's message, with the attachments signal-cli stored, still to fetch."""

    message: InboundMessage
    media: tuple[MediaRef, ...]


def is_group(chat_id: str) -> bool:
    """Whether a chat id is a group's (base64) rather than a person's number or uuid."""
    return not chat_id.startswith("+") and _UUID.match(chat_id) is None


def target(chat_id: str) -> dict[str, Any]:
    """The parameters that address a chat in `send`, `sendReaction` and `sendTyping`."""
    return {"groupId": chat_id} if is_group(chat_id) else {"recipient": [chat_id]}


def message_id(author: str, timestamp: int | str) -> str:
    """A Signal message's id: its author and its sent timestamp (`+49…:1700000000000`)."""
    return f"{author}:{timestamp}"


def author_and_timestamp(platform_id: str) -> tuple[str, int] | None:
    """`message_id` read back; None when it is not one."""
    author, _, stamp = platform_id.rpartition(":")
    return (author, int(stamp)) if author and stamp.isdigit() else None


def parse_receive(event: dict[str, Any], me: Me) -> Incoming | None:
    """A data message (or an edit of one) someone else sent, as an Incoming; None for typing, receipts, syncs,
    reactions and deletions."""
    envelope = event.get("envelope") or {}
    edit = envelope.get("editMessage") or {}
    data = edit.get("dataMessage") or envelope.get("dataMessage")
    sender = envelope.get("sourceNumber") or envelope.get("sourceUuid")
    if not isinstance(data, dict) or not sender or me.is_me(envelope.get("sourceNumber"), envelope.get("sourceUuid")):
        return None
    if data.get("reaction") or data.get("remoteDelete"):
        return None
    media = tuple(attachments_of(data))
    text, named_me = without_mentions(str(data.get("message") or ""), data.get("mentions") or [], me)
    if not text.strip() and not media:
        return None
    group = (data.get("groupInfo") or {}).get("groupId")
    quote = _quote(data.get("quote"), me)
    by_name = bool(me.name) and re.search(rf"\b{re.escape(me.name)}\b", text, re.IGNORECASE) is not None
    stamp = data.get("timestamp") or envelope.get("timestamp") or 0
    target_stamp = edit.get("targetSentTimestamp")
    message = InboundMessage(
        chat=ChatRef(CHANNEL, group or sender),
        sender_id=sender,
        text=text.strip(),
        sender_name=envelope.get("sourceName") or None,
        is_direct=group is None,
        mentioned=group is None or named_me or by_name or (quote is not None and quote.from_bot),
        platform_message_id=message_id(sender, stamp),
        server_id=group,
        reply_to=quote,
        edit_of=message_id(sender, target_stamp) if target_stamp else None,
    )
    return Incoming(message, () if target_stamp else media)


def without_mentions(text: str, mentions: list[dict[str, Any]], me: Me) -> tuple[str, bool]:
    """The text with each mention mark replaced by `@name` (the bot's own taken out); whether the bot was named.

    Mention offsets count UTF-16 code units, as Java's strings do."""
    units = text.encode("utf-16-le")
    named_me = False
    for mention in sorted(mentions, key=lambda m: int(m.get("start") or 0), reverse=True):
        start, length = int(mention.get("start") or 0), int(mention.get("length") or 1)
        mine = me.is_me(mention.get("number"), mention.get("uuid"))
        named_me = named_me or mine
        shown = "" if mine else f"@{mention.get('name') or mention.get('number') or 'someone'}"
        units = units[: 2 * start] + shown.encode("utf-16-le") + units[2 * (start + length) :]
    return units.decode("utf-16-le").replace(MENTION_MARK, ""), named_me


def attachments_of(data: dict[str, Any]) -> list[MediaRef]:
    """The attachments of a data message, by the id signal-cli stored them under."""
    found = []
    for item in data.get("attachments") or []:
        if isinstance(item, dict) and item.get("id"):
            mime = item.get("contentType") or "application/octet-stream"
            found.append(MediaRef(item["id"], item["id"], kind_of(mime), mime, item.get("size"), item.get("filename")))
    return found


def _quote(quote: Any, me: Me) -> Quote | None:
    """The quoted message as a Quote: who wrote it (the bot?) and its text."""
    if not isinstance(quote, dict) or not quote.get("id"):
        return None
    author = quote.get("authorNumber") or quote.get("authorUuid") or quote.get("author")
    from_bot = me.is_me(quote.get("authorNumber") or quote.get("author"), quote.get("authorUuid"))
    text = str(quote.get("text") or "[an earlier message]")[:1000]
    platform_id = message_id(author, quote["id"]) if author else None
    return Quote(text, None if from_bot else author, None, from_bot, platform_message_id=platform_id)
