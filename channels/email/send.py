"""Mail out: one reply per outbound message, in its thread (Re: subject, In-Reply-To, References), files attached."""

from __future__ import annotations

import mimetypes
from email.message import EmailMessage
from email.utils import formatdate
from pathlib import Path

from bot.bus import OutboundMessage
from bot.config.channels.email import SmtpConfig
from channels.email.calls import call_smtp
from channels.email.parse import reply_subject
from channels.email.threads import Thread
from channels.numbered import NumberedChoices

SMTP_TIMEOUT = 60.0


def compose(
    message: OutboundMessage, sender: str, thread: Thread | None, choices: NumberedChoices, message_id: str
) -> EmailMessage:
    """The mail for `message`: a reply in `thread` when known, a new thread otherwise; marked as not to be answered."""
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = message.chat.chat_id
    if thread is not None:
        mail["Subject"] = reply_subject(thread.subject)
        answered = message.reply_to_platform_id if message.reply_to_platform_id in thread.references else None
        mail["In-Reply-To"] = answered or thread.latest
        mail["References"] = " ".join(thread.references)
    else:
        mail["Subject"] = _first_line(message.text)
    mail["Message-ID"] = message_id
    mail["Date"] = formatdate(localtime=True)
    # Out-of-office replies and other robots must not answer us (RFC 3834), nor we them.
    mail["Auto-Submitted"] = "auto-replied"
    mail["X-Auto-Response-Suppress"] = "All"
    mail.set_content(choices.shown(message) or " ")
    for file in message.files:
        path = Path(file.path)
        mime = file.mime_type or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        maintype, _, subtype = mime.partition("/")
        mail.add_attachment(path.read_bytes(), maintype=maintype, subtype=subtype or "octet-stream", filename=path.name)
    return mail


async def send_mail(mail: EmailMessage, config: SmtpConfig) -> None:
    """Hand the mail to the SMTP server (TLS as configured, login when a user is set)."""
    import aiosmtplib

    password = config.password.get_secret_value()
    await call_smtp(
        aiosmtplib.send(
            mail,
            hostname=config.host,
            port=config.port,
            username=config.user or None,
            password=password if config.user else None,
            use_tls=config.tls == "implicit",
            start_tls=config.tls == "starttls",
            timeout=SMTP_TIMEOUT,
        )
    )


def _first_line(text: str) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "A message from relaybot")
    return line if len(line) <= 70 else line[:69] + "…"
