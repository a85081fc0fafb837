"""Matrix room events to bus messages, pure: text and media messages, edits (`m.replace`), threads, replies."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from bot.bus import ChatRef, InboundMessage, Quote
from channels.media import MediaRef, kind_of

MEDIA_TYPES = frozenset({"m.image", "m.file", "m.audio", "m.video"})
TEXT_TYPES = frozenset({"m.text", "m.notice", "m.emote"})
QUOTE_LIMIT = 1000


@dataclass(frozen=True, slots=True)
class Me:
    """Who the bot is on the homeserver: what a mention of it looks like."""

    user_id: str
    display_name: str | None = None

    def mentioned_in(self, content: dict[str, Any], body: str) -> bool:
        """`m.mentions` names the bot, or the body names its user id or display name, or the HTML links to it."""
        mentions = content.get("m.mentions")
        if isinstance(mentions, dict) and self.user_id in (mentions.get("user_ids") or []):
            return True
        names = [self.user_id, *([self.display_name] if self.display_name else [])]
        if any(re.search(rf"(?<![\w@]){re.escape(name)}(?!\w)", body, re.IGNORECASE) for name in names):
            return True
        return f"matrix.to/#/{self.user_id}" in str(content.get("formatted_body") or "")


def thread_of(content: dict[str, Any]) -> str | None:
    """The thread root's event id when the event is in a thread (`rel_type: m.thread`)."""
    relation = content.get("m.relates_to")
    if isinstance(relation, dict) and relation.get("rel_type") == "m.thread":
        root = relation.get("event_id")
        return root if isinstance(root, str) else None
    return None


def replied_to(content: dict[str, Any]) -> str | None:
    """The event a message answers (`m.in_reply_to`), except a thread's fallback reply to its previous message."""
    relation = content.get("m.relates_to")
    if not isinstance(relation, dict) or relation.get("is_falling_back"):
        return None
    reply = relation.get("m.in_reply_to")
    event_id = reply.get("event_id") if isinstance(reply, dict) else None
    return event_id if isinstance(event_id, str) else None


def without_reply_fallback(body: str) -> str:
    """The body without the `> <@user> quoted` lines older clients put before a reply."""
    if not body.startswith("> "):
        return body
    lines = body.split("\n")
    while lines and lines[0].startswith(">"):
        lines.pop(0)
    return "\n".join(lines).lstrip("\n")


def media_of(event: dict[str, Any]) -> MediaRef | None:
    """The file an `m.image`/`m.file`/`m.audio`/`m.video` message carries in the media repository (`mxc://`),
    plain (`url`) or encrypted (`file.url`, see `sealed_file_of`)."""
    content = event.get("content") or {}
    url = content.get("url") or (sealed_file_of(event) or {}).get("url")
    if content.get("msgtype") not in MEDIA_TYPES or not isinstance(url, str) or not url.startswith("mxc://"):
        return None
    info: dict[str, Any] = content["info"] if isinstance(content.get("info"), dict) else {}
    mime = str(info.get("mimetype") or "application/octet-stream")
    size = info.get("size") if isinstance(info.get("size"), int) else None
    name = content.get("filename") or content.get("body") or None
    kind = "voice" if content.get("msgtype") == "m.audio" else kind_of(mime)
    return MediaRef(url, url.rsplit("/", 1)[-1], kind, mime, size, str(name) if name else None)


def sealed_file_of(event: dict[str, Any]) -> dict[str, Any] | None:
    """An encrypted attachment's `file` (url, key, iv, hashes), or None for a plain one."""
    sealed = (event.get("content") or {}).get("file")
    return sealed if isinstance(sealed, dict) else None


def parse_event(room_id: str, event: dict[str, Any], me: Me, is_direct: bool) -> InboundMessage | None:
    """A user's `m.room.message` (or an edit of one) as an InboundMessage; None for anything else or the bot's own."""
    content = event.get("content")
    sender, event_id = event.get("sender"), event.get("event_id")
    if event.get("type") != "m.room.message" or not isinstance(content, dict) or not sender or not event_id:
        return None
    if sender == me.user_id:
        return None
    relation: dict[str, Any] = content["m.relates_to"] if isinstance(content.get("m.relates_to"), dict) else {}
    edit_of = None
    if relation.get("rel_type") == "m.replace" and isinstance(content.get("m.new_content"), dict):
        edit_of = relation.get("event_id")
        content = {**content["m.new_content"], "m.relates_to": {}}
    msgtype = content.get("msgtype")
    if msgtype not in TEXT_TYPES and msgtype not in MEDIA_TYPES:
        return None
    quoted = replied_to(content)
    body = str(content.get("body") or "")
    text = without_reply_fallback(body) if quoted else body
    if msgtype in MEDIA_TYPES:
        text = ""  # a file's body is its name; the attachment says so
    elif not text.strip():
        return None
    thread = thread_of(content) if edit_of is None else None
    return InboundMessage(
        chat=ChatRef("matrix", room_id, thread),
        sender_id=sender,
        text=text,
        is_direct=is_direct,
        mentioned=me.mentioned_in(content, text),
        platform_message_id=f"{event_id}@{event.get('origin_server_ts', '')}" if edit_of else event_id,
        server_id=None if is_direct else room_id,
        reply_to=Quote("", platform_message_id=quoted) if quoted else None,
        edit_of=edit_of,
    )


def quote_of(event: dict[str, Any], me: Me) -> Quote | None:
    """The replied-to event as a Quote: its text (fallback removed, capped), author, whether the bot wrote it."""
    content = event.get("content")
    if not isinstance(content, dict):
        return None
    new = content.get("m.new_content")
    body = str((new if isinstance(new, dict) else content).get("body") or "")
    sender = event.get("sender")
    text = without_reply_fallback(body)[:QUOTE_LIMIT]
    return Quote(text, sender, None, from_bot=sender == me.user_id, platform_message_id=event.get("event_id"))


def inviter_of(invite_state: list[Any], me: Me) -> tuple[str, str | None] | None:
    """Who invited the bot (user id, display name) from an invite's stripped state; None when it does not say.

    Takes raw events or nio's parsed ones (whose `source` has lost its `content`)."""
    members = {}
    for event in invite_state:
        raw = event if isinstance(event, dict) else getattr(event, "source", {})
        if raw.get("type") != "m.room.member":
            continue
        content = raw.get("content") or {
            "membership": getattr(event, "membership", None),
            **getattr(event, "content", {}),
        }
        members[raw.get("state_key")] = (raw.get("sender"), content)
    sender, content = members.get(me.user_id, (None, {}))
    if content.get("membership") != "invite" or not isinstance(sender, str):
        return None
    _, inviter = members.get(sender, (None, {}))
    name = inviter.get("displayname")
    return sender, name if isinstance(name, str) else None
