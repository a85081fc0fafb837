"""IRC lines as InboundMessages: pure functions, unit-tested; who wrote, where, and whether the bot was addressed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.bus import ChatRef, InboundMessage

CHANNEL = "irc"
CHANNEL_PREFIXES = "#&+!"
"""RFC 2812 §1.3: channel names start with one of these (a server's CHANTYPES may name fewer)."""
ACTION = "\x01ACTION "
DCC_SEND = "\x01DCC SEND "
_CONTROL = re.compile(r"\x02|\x03(?:\d{1,2}(?:,\d{1,2})?)?|\x04[0-9a-fA-F]{0,6}|[\x0f\x11\x16\x1d\x1e\x1f]")


@dataclass(frozen=True, slots=True)
class Line:
    """One PRIVMSG the bot received: from whom, to which target (a channel or the bot's nick), saying what."""

    sender: str
    target: str
    text: str


def is_channel(target: str, chantypes: str = CHANNEL_PREFIXES) -> bool:
    """Whether `target` names a channel rather than a nick."""
    return bool(target) and target[0] in chantypes


def plain(text: str) -> str:
    """`text` without mIRC formatting codes (bold, colours, italics, reset)."""
    return _CONTROL.sub("", text)


def address_of(text: str, nick: str) -> tuple[bool, str]:
    """Whether the line speaks to `nick` (`nick: …`, `nick, …`, `@nick …` or the nick as a word anywhere), and the
    text with a leading address removed. Nicks compare case-insensitively, as IRC's casemapping does for ASCII."""
    lead = re.match(rf"^\s*@?{re.escape(nick)}[:,>]?(?:\s+|$)", text, re.IGNORECASE)
    if lead and (lead.group(0).rstrip() != lead.group(0) or lead.end() == len(text) or text[lead.end() - 1] in ":,>"):
        return True, text[lead.end() :].strip()
    anywhere = re.search(rf"(?<![\w\-\[\]\\`^{{}}|]){re.escape(nick)}(?![\w\-\[\]\\`^{{}}|])", text, re.IGNORECASE)
    return anywhere is not None, text.strip()


def dcc_notice(ctcp: str) -> str:
    """What the model is told of a file offered over DCC, which the bot never accepts (a direct connection to the
    sender's address): the file's name and size as offered."""
    fields = ctcp.strip("\x01").split(" ")[2:]
    name = fields[0].strip('"') if fields else "a file"
    size = f" ({fields[3]} bytes)" if len(fields) > 3 and fields[3].isdigit() else ""
    return f"[offered a file over DCC, {name}{size}; IRC cannot carry files to me, so it was not received]"


def parse_line(line: Line, own_nick: str, network: str, chantypes: str = CHANNEL_PREFIXES) -> InboundMessage | None:
    """A PRIVMSG as the message to publish; None for the bot's own lines, CTCP queries and empty text.
    In a channel, `mentioned` says whether the bot was addressed; a private message always is."""
    if line.sender.lower() == own_nick.lower():
        return None
    text = line.text
    if text.startswith(ACTION):
        text = f"* {line.sender} {text[len(ACTION) :].rstrip(chr(1))}"
    elif text.startswith(DCC_SEND):
        text = dcc_notice(text)
    elif text.startswith("\x01"):
        return None  # CTCP (VERSION, PING …): not a message for the model
    text = plain(text).strip()
    if not text:
        return None
    if not is_channel(line.target, chantypes):
        return InboundMessage(ChatRef(CHANNEL, line.sender), line.sender, text, sender_name=line.sender, mentioned=True)
    mentioned, said = address_of(text, own_nick)
    return InboundMessage(
        ChatRef(CHANNEL, line.target),
        sender_id=line.sender,
        text=said or text,
        sender_name=line.sender,
        is_direct=False,
        mentioned=mentioned,
        server_id=network,
    )
