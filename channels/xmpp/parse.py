"""XMPP messages as InboundMessages: pure functions over plain fields, unit-tested."""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass, replace
from pathlib import PurePosixPath
from urllib.parse import unquote, urlsplit

from bot.bus import ChatRef, InboundMessage
from channels.media import MediaRef, kind_of

CHANNEL = "xmpp"


@dataclass(frozen=True, slots=True)
class Stanza:
    """What the bot needs of one received message: kind, sender (bare JID, or room and nick), id, body."""

    kind: str  # "chat", "normal" or "groupchat"
    sender: str  # a bare JID for a one-to-one chat; the room's bare JID in a room
    body: str
    message_id: str = ""
    nick: str = ""  # the occupant's nick in a room
    real_jid: str = ""  # the occupant's bare JID, where the room shows it to the bot
    replaces: str = ""  # XEP-0308: the id of the message this one corrects
    delayed: bool = False  # XEP-0203: room history replayed on join, not a new message
    link: str = ""  # XEP-0066: the URL of a file the message carries (as clients send HTTP-upload files)


def shared_file(stanza: Stanza) -> MediaRef | None:
    """The file a message shares, where its body is just its XEP-0066 link (how clients send a file); else None."""
    if not stanza.link or stanza.body.strip() != stanza.link or urlsplit(stanza.link).scheme not in ("http", "https"):
        return None
    name = unquote(PurePosixPath(urlsplit(stanza.link).path).name) or "file"
    mime_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    unique = stanza.message_id or str(abs(hash(stanza.link)))
    return MediaRef(stanza.link, unique, kind_of(mime_type), mime_type, None, name)


def without_link(message: InboundMessage) -> InboundMessage:
    """The message of a shared file: the file comes as an attachment, so the link is not also its text."""
    return replace(message, text="")


def mentions(body: str, nick: str) -> tuple[bool, str]:
    """Whether a room message addresses `nick` (`nick: …`, `nick, …`, or the nick as a word), and the text with a
    leading address removed."""
    lead = re.match(rf"^\s*@?{re.escape(nick)}[:,]\s*", body, re.IGNORECASE)
    if lead:
        return True, body[lead.end() :].strip()
    return re.search(rf"(?<!\w){re.escape(nick)}(?!\w)", body, re.IGNORECASE) is not None, body.strip()


def parse_stanza(stanza: Stanza, own_jid: str, own_nick: str) -> InboundMessage | None:
    """The message to publish; None for the bot's own messages, room history, and messages without text."""
    body = stanza.body.strip()
    if not body or stanza.delayed:
        return None
    edit_of = stanza.replaces or None
    if stanza.kind != "groupchat":
        if stanza.sender.lower() == own_jid.lower():
            return None
        chat = ChatRef(CHANNEL, stanza.sender)
        return InboundMessage(
            chat,
            stanza.sender,
            body,
            sender_name=stanza.sender.split("@")[0],
            mentioned=True,
            platform_message_id=stanza.message_id or None,
            edit_of=edit_of,
        )
    if stanza.nick.lower() == own_nick.lower():
        return None
    mentioned, said = mentions(body, own_nick)
    return InboundMessage(
        ChatRef(CHANNEL, stanza.sender),
        sender_id=stanza.real_jid or f"{stanza.sender}/{stanza.nick}",
        text=said or body,
        sender_name=stanza.nick,
        is_direct=False,
        mentioned=mentioned,
        platform_message_id=stanza.message_id or None,
        server_id=stanza.sender.partition("@")[2] or None,
        edit_of=edit_of,
    )
