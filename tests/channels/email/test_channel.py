"""The email channel against a real Dovecot (IMAP, IDLE) and a real SMTP server (aiosmtpd), both on 127.0.0.1."""

import asyncio
from collections.abc import AsyncIterator
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

import pytest_asyncio

from bot.bus import Attachment, ChatRef, Choice, InboundMessage, OutboundMessage, Press
from bot.config.channels.email import EmailConfig
from bot.errors import BusClosed
from bot.retry import RetryPolicy
from channels.email.channel import EmailChannel
from tests.support.harness import RecordedSleep
from tests.support.mail_servers import BOT_ADDRESS, Dovecot, SmtpSink

ANN = "ann@example.org"


def mail(text: str, subject: str = "Trip", sender: str = f"Ann <{ANN}>", **headers: str) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, BOT_ADDRESS, subject
    message["Message-ID"] = make_msgid(domain="example.org")
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return message


def email_config(dovecot: Dovecot, sink: SmtpSink, **extra: object) -> EmailConfig:
    return EmailConfig.model_validate(
        {
            "enabled": True,
            "imap": {
                "host": "127.0.0.1",
                "port": dovecot.port,
                "user": dovecot.user,
                "password": dovecot.password,
                "tls": False,
            },
            "smtp": {
                "host": "127.0.0.1",
                "port": sink.port,
                "user": BOT_ADDRESS,
                "password": "smtp-pw",
                "from": BOT_ADDRESS,
                "tls": "off",
            },
            **extra,
        }
    )


class Inbox:
    """The publish callable the channel gets: keeps what it publishes, can refuse like a stopping bus."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.closed = False
        self._arrived = asyncio.Condition()

    async def publish(self, message: InboundMessage) -> None:
        if self.closed:
            raise BusClosed("stopping")
        async with self._arrived:
            self.messages.append(message)
            self._arrived.notify_all()

    async def wait_for(self, count: int) -> list[InboundMessage]:
        async with asyncio.timeout(15), self._arrived:
            await self._arrived.wait_for(lambda: len(self.messages) >= count)
        return self.messages


@pytest_asyncio.fixture
async def inbox() -> Inbox:
    return Inbox()


@pytest_asyncio.fixture
async def channel(dovecot: Dovecot, smtp_sink: SmtpSink, inbox: Inbox, tmp_path: Path) -> AsyncIterator[EmailChannel]:
    running = EmailChannel(
        inbox.publish,
        email_config(dovecot, smtp_sink),
        tmp_path,
        tmp_path / "state",
        RetryPolicy(sleep=RecordedSleep()),
    )
    await running.start()
    yield running
    await running.stop()


async def test_a_mail_becomes_a_message_and_is_seen_only_after_the_publish(
    dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    inbox, taken, journaled = Inbox(), asyncio.Event(), asyncio.Event()

    async def publish(message: InboundMessage) -> None:
        taken.set()
        await journaled.wait()  # the inbox's write is still under way
        await inbox.publish(message)

    channel = EmailChannel(
        publish, email_config(dovecot, smtp_sink), tmp_path, tmp_path / "state", RetryPolicy(sleep=RecordedSleep())
    )
    await channel.start()
    try:
        first = mail("Can you book the train?")
        await dovecot.deliver(first)
        await asyncio.wait_for(taken.wait(), 10)
        assert await dovecot.seen_count() == 0
        journaled.set()
        (message,) = await inbox.wait_for(1)
        await dovecot.wait_seen(1)
    finally:
        await channel.stop()
    assert message.sender_id == ANN and message.sender_name == "Ann" and message.is_direct
    assert message.text == "Subject: Trip\n\nCan you book the train?"
    assert message.platform_message_id == first["Message-ID"]
    assert message.chat.channel == "email" and message.chat.chat_id == ANN and message.chat.thread_id


async def test_a_reply_keeps_the_thread_and_the_subject_with_one_re(
    channel: EmailChannel, dovecot: Dovecot, inbox: Inbox, smtp_sink: SmtpSink
) -> None:
    first = mail("Hello", subject="RE: Re: fwd: Plans")
    await dovecot.deliver(first)
    (message,) = await inbox.wait_for(1)
    await channel.send(OutboundMessage(message.chat, "Hi Ann", reply_to_platform_id=message.platform_message_id))
    (reply,) = await smtp_sink.wait_for(1)
    assert reply["Subject"] == "Re: Plans" and reply["To"] == ANN
    assert reply["In-Reply-To"] == first["Message-ID"] and reply["References"] == first["Message-ID"]
    assert reply["Auto-Submitted"] == "auto-replied" and reply.get_content().strip() == "Hi Ann"
    answer = mail("> Hi Ann\nThanks!\n\n-- \nAnn, sent from a phone", subject=reply["Subject"])
    answer["In-Reply-To"], answer["References"] = reply["Message-ID"], f"{first['Message-ID']} {reply['Message-ID']}"
    await dovecot.deliver(answer)
    second = (await inbox.wait_for(2))[1]
    assert second.chat == message.chat and second.text == "Thanks!"


async def test_html_only_mail_is_read_as_text_without_the_quoted_part(
    channel: EmailChannel, dovecot: Dovecot, inbox: Inbox
) -> None:
    html = mail("")
    html.set_content(
        "<html><head><style>p{}</style></head><body><p>Is <b>Friday</b> fine?</p>"
        "<blockquote>old mail</blockquote><script>x()</script></body></html>",
        subtype="html",
    )
    await dovecot.deliver(html)
    (message,) = await inbox.wait_for(1)
    assert message.text == "Subject: Trip\n\nIs Friday fine?"


async def test_auto_replies_bounces_and_lists_are_never_answered(
    channel: EmailChannel, dovecot: Dovecot, inbox: Inbox, smtp_sink: SmtpSink
) -> None:
    await dovecot.deliver(mail("I am out of office", Auto_Submitted="auto-replied"))
    await dovecot.deliver(mail("Undeliverable", sender="MAILER-DAEMON@example.org"))
    await dovecot.deliver(mail("News", List_Id="<news.example.org>"))
    await dovecot.deliver(mail("Echo", sender=BOT_ADDRESS))
    await dovecot.deliver(mail("A person"))
    (message,) = await inbox.wait_for(1)
    assert message.text.endswith("A person")
    await dovecot.wait_seen(5)  # the four never to be answered are handled too, not left for a re-read
    assert smtp_sink.received == [] and len(inbox.messages) == 1


async def test_attachments_arrive_as_files_and_go_out_attached(
    channel: EmailChannel, dovecot: Dovecot, inbox: Inbox, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    incoming = mail("See the plan")
    incoming.add_attachment(b"%PDF-1.4 plan", maintype="application", subtype="pdf", filename="plan.pdf")
    await dovecot.deliver(incoming)
    (message,) = await inbox.wait_for(1)
    (attachment,) = message.attachments
    assert Path(attachment.path).read_bytes() == b"%PDF-1.4 plan" and attachment.mime_type == "application/pdf"
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")
    await channel.send(OutboundMessage(message.chat, "Done", files=(Attachment(str(report), "text/csv"),)))
    (reply,) = await smtp_sink.wait_for(1)
    (part,) = list(reply.iter_attachments())
    assert part.get_filename() == "report.csv" and part.get_content() == "a,b\n1,2\n"


async def test_choices_are_numbered_and_a_typed_number_presses(
    channel: EmailChannel, dovecot: Dovecot, inbox: Inbox, smtp_sink: SmtpSink
) -> None:
    await dovecot.deliver(mail("Should I?"))
    (message,) = await inbox.wait_for(1)
    choices = (Choice("yes", "Yes"), Choice("no", "No"))
    await channel.send(OutboundMessage(message.chat, "Run it?", choices=choices, prompt_id="p1"))
    (prompt,) = await smtp_sink.wait_for(1)
    assert prompt.get_content().replace("\r\n", "\n").strip() == "Run it?\n1. Yes\n2. No"
    answer = mail(
        "2\n\nOn Monday, relaybot wrote:\n> Run it?", subject=prompt["Subject"], In_Reply_To=prompt["Message-ID"]
    )
    answer["References"] = f"{message.platform_message_id} {prompt['Message-ID']}"
    await dovecot.deliver(answer)
    pressed = (await inbox.wait_for(2))[1]
    assert pressed.press == Press("p1", "no") and pressed.text == "No" and pressed.chat == message.chat


async def test_a_mail_not_taken_is_read_again_after_a_restart(
    dovecot: Dovecot, smtp_sink: SmtpSink, inbox: Inbox, tmp_path: Path
) -> None:
    config = email_config(dovecot, smtp_sink)
    inbox.closed = True  # the bus refuses: as if the process stopped before the journal write
    first = EmailChannel(inbox.publish, config, tmp_path, tmp_path / "state")
    await first.start()
    await dovecot.deliver(mail("Do not lose me"))
    assert first._reader is not None
    await asyncio.wait_for(asyncio.shield(first._reader), 15)  # the reader ends on BusClosed
    await first.stop()
    assert await dovecot.seen_count() == 0
    inbox.closed = False
    second = EmailChannel(inbox.publish, config, tmp_path, tmp_path / "state")
    await second.start()
    try:
        (message,) = await inbox.wait_for(1)
        assert message.text.endswith("Do not lose me")
    finally:
        await second.stop()


async def test_a_new_message_without_a_thread_starts_one(channel: EmailChannel, smtp_sink: SmtpSink) -> None:
    await channel.send(OutboundMessage(ChatRef("email", ANN), "Reminder: the train leaves at 9.\nBring the tickets."))
    (sent,) = await smtp_sink.wait_for(1)
    assert sent["Subject"] == "Reminder: the train leaves at 9." and "In-Reply-To" not in sent
    assert smtp_sink.envelopes == [(BOT_ADDRESS, [ANN])]
