"""Mail in, pure: who sent it, which thread it belongs to, its text without quotes and signature, its files."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from email import message_from_bytes, policy
from email.message import EmailMessage, Message
from email.utils import getaddresses, parseaddr
from html.parser import HTMLParser

CHANNEL = "email"
AUTOMATED_SENDERS = ("mailer-daemon@", "postmaster@", "noreply@", "no-reply@", "donotreply@", "do-not-reply@")
_QUOTE_HEADER = re.compile(
    r"^\s*(On\s.+wrote:|Am\s.+schrieb.*:|Le\s.+a écrit\s*:|-{2,}\s*Original Message\s*-{2,})\s*$"
)
_PREFIX = re.compile(r"^\s*((re|fwd?|aw|wg|sv|antw)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_MESSAGE_ID = re.compile(r"<[^<>\s]+>")


@dataclass(frozen=True, slots=True)
class MailFile:
    """A file attached to a mail, bytes in hand."""

    name: str
    mime_type: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Mail:
    """One incoming mail as relaybot reads it: sender, thread, subject, trimmed text, files."""

    sender: str  # the address, lower case
    sender_name: str | None
    message_id: str
    thread: str  # the root Message-ID of its thread
    references: tuple[str, ...]  # the thread's References, this mail's own id last
    subject: str
    text: str
    files: tuple[MailFile, ...]


def read_mail(raw: bytes) -> EmailMessage:
    """The mail parsed with the modern email API."""
    message = message_from_bytes(raw, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def automated_reason(message: Message, own_address: str) -> str | None:
    """Why a mail must never be answered (an auto-reply, a bounce, a list, our own), or None for a person's mail."""
    sender = parseaddr(str(message.get("From", "")))[1].lower()
    checks = (
        (str(message.get("Auto-Submitted", "no")).strip().lower() != "no", "Auto-Submitted"),
        (str(message.get("Precedence", "")).strip().lower() in ("bulk", "list", "junk"), "Precedence"),
        ("List-Id" in message or "List-Unsubscribe" in message, "a mailing list"),
        ("X-Auto-Response-Suppress" in message, "X-Auto-Response-Suppress"),
        (str(message.get("Return-Path", "")).strip() == "<>", "an empty Return-Path (a bounce)"),
        (sender.startswith(AUTOMATED_SENDERS), f"an automated sender ({sender})"),
        (message.get_content_type() == "multipart/report", "a delivery report"),
        (not sender or sender == own_address.lower(), "our own address"),
    )
    return next((reason for automated, reason in checks if automated), None)


def parse_mail(message: EmailMessage) -> Mail | None:
    """The mail's parts relaybot reads; None when it has no sender address or no Message-ID."""
    name, sender = parseaddr(str(message.get("From", "")))
    message_id = _ids(str(message.get("Message-ID", "")))
    if not sender or not message_id:
        return None
    references = _ids(str(message.get("References", ""))) or _ids(str(message.get("In-Reply-To", "")))
    chain = (*references, message_id[0])
    return Mail(
        sender=sender.lower(),
        sender_name=name or None,
        message_id=message_id[0],
        thread=chain[0],
        references=chain,
        subject=str(message.get("Subject", "")).strip(),
        text=trim_reply(body_text(message)),
        files=tuple(_files(message)),
    )


def thread_key(root_message_id: str) -> str:
    """A short, path-safe session thread id for a thread's root Message-ID."""
    return hashlib.sha256(root_message_id.encode()).hexdigest()[:16]


def reply_subject(subject: str) -> str:
    """The subject with its run of Re:/Fwd: prefixes (any language, any case) replaced by one `Re: `."""
    return f"Re: {_PREFIX.sub('', subject).strip() or '(no subject)'}"


def addresses(header: str) -> list[str]:
    """The bare addresses in a To/Cc header, lower case."""
    return [address.lower() for _, address in getaddresses([header]) if address]


def body_text(message: EmailMessage) -> str:
    """The plain-text body, else the HTML body read as text; empty when there is neither."""
    part = message.get_body(("plain", "html"))
    if part is None:
        return ""
    content = str(part.get_content())
    return html_to_text(content) if part.get_content_type() == "text/html" else content


def trim_reply(text: str) -> str:
    """The new text of a reply: quoted lines, everything from "On … wrote:" and the "-- " signature cut."""
    kept: list[str] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if _QUOTE_HEADER.match(line) or line.rstrip() == "--" or line == "-- ":
            break
        if not line.lstrip().startswith(">"):
            kept.append(line.rstrip())
    return re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()


def html_to_text(html: str) -> str:
    """HTML's visible text: blocks become lines, scripts and styles dropped."""
    reader = _TextOf()
    reader.feed(html)
    reader.close()
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", "".join(reader.parts))).strip()


class _TextOf(HTMLParser):
    BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._hidden = 0
        self._quoted = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "head"):
            self._hidden += 1
        elif tag == "blockquote":
            self._quoted += 1  # quoted earlier mail, as Gmail and Outlook send it
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "head"):
            self._hidden = max(0, self._hidden - 1)
        elif tag == "blockquote":
            self._quoted = max(0, self._quoted - 1)
        if tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._hidden and not self._quoted:
            self.parts.append(re.sub(r"\s+", " ", data))


def _ids(header: str) -> tuple[str, ...]:
    return tuple(_MESSAGE_ID.findall(header))


def _files(message: EmailMessage) -> list[MailFile]:
    found = []
    for part in message.iter_attachments():
        if not isinstance(part, EmailMessage):
            continue
        data = part.get_payload(decode=True)
        if isinstance(data, bytes) and data:
            found.append(MailFile(part.get_filename() or "attachment", part.get_content_type(), data))
    return found
