"""The email channel's connections: polling without IDLE, a dropped IMAP connection, refused logins."""

import asyncio
import socket
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.retry import RetryPolicy
from channels.abilities import ReportsLiveness
from channels.email.channel import EmailChannel
from channels.email.mailbox import Mailbox
from tests.channels.email.test_channel import ANN, Inbox, email_config, mail
from tests.support.harness import RecordedSleep
from tests.support.mail_servers import Dovecot, DovecotServer, SmtpSink


class PollTicks:
    """An injected poll wait: returns when the test says new mail is there, counting the waits."""

    def __init__(self) -> None:
        self.tick = asyncio.Event()
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await self.tick.wait()
        self.tick.clear()


@pytest.fixture
def no_idle_dovecot(plain_dovecot_server: DovecotServer) -> Dovecot:
    return plain_dovecot_server.mailbox()


async def test_without_idle_the_folder_is_polled_every_poll_interval(
    no_idle_dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    inbox, ticks = Inbox(), PollTicks()
    config = email_config(no_idle_dovecot, smtp_sink)
    config = config.model_copy(update={"imap": config.imap.model_copy(update={"poll_interval": 7.0})})
    channel = EmailChannel(
        inbox.publish, config, tmp_path, tmp_path / "state", mailbox=Mailbox(config.imap, poll=ticks)
    )
    await channel.start()
    try:
        await no_idle_dovecot.deliver(mail("polled"))
        ticks.tick.set()
        (message,) = await inbox.wait_for(1)
        assert message.text.endswith("polled") and ticks.waits[0] == 7.0
    finally:
        await channel.stop()


async def test_a_dropped_imap_connection_is_reopened_with_backoff(
    dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    inbox, sleep = Inbox(), RecordedSleep()
    config = email_config(dovecot, smtp_sink)
    mailbox = Mailbox(config.imap)
    channel = EmailChannel(
        inbox.publish, config, tmp_path, tmp_path / "state", RetryPolicy(sleep=sleep), mailbox=mailbox
    )
    await channel.start()
    try:
        await dovecot.deliver(mail("before"))
        await inbox.wait_for(1)
        mailbox._client.protocol.transport.close()  # the server went away (mid-IDLE, or before the \\Seen)
        await dovecot.deliver(mail("after"))
        while not inbox.messages[-1].text.endswith("after"):
            await inbox.wait_for(len(inbox.messages) + 1)
        assert all(m.text.endswith(("before", "after")) for m in inbox.messages)  # "before" again if not yet seen
        assert len(sleep.waits) == 1
    finally:
        await channel.stop()


async def test_a_refused_imap_login_fails_start(no_idle_dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path) -> None:
    config = email_config(no_idle_dovecot, smtp_sink)
    config = config.model_copy(update={"imap": config.imap.model_copy(update={"password": SecretStr("wrong")})})
    channel = EmailChannel(Inbox().publish, config, tmp_path, tmp_path / "state")
    with pytest.raises(ChannelError, match="IMAP login refused"):
        await channel.start()


async def test_a_refused_smtp_login_is_a_channel_error_not_retried(
    dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    config = email_config(dovecot, smtp_sink)
    config = config.model_copy(update={"smtp": config.smtp.model_copy(update={"password": SecretStr("wrong")})})
    sleep = RecordedSleep()
    channel = EmailChannel(Inbox().publish, config, tmp_path, tmp_path / "state", RetryPolicy(sleep=sleep))
    await channel.start()
    try:
        with pytest.raises(ChannelError, match="SMTP login refused"):
            await channel.send(OutboundMessage(ChatRef("email", ANN), "hello"))
        assert sleep.waits == [] and smtp_sink.received == []
    finally:
        await channel.stop()


async def test_an_smtp_server_that_is_down_is_retried(dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path) -> None:
    config = email_config(dovecot, smtp_sink)
    with socket.socket() as unused:  # a port nothing listens on: connections are refused at once
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    config = config.model_copy(update={"smtp": config.smtp.model_copy(update={"port": port})})
    sleep = RecordedSleep()
    channel = EmailChannel(Inbox().publish, config, tmp_path, tmp_path / "state", RetryPolicy(attempts=3, sleep=sleep))
    await channel.start()
    try:
        with pytest.raises(ChannelError, match="SMTP"):
            await channel.send(OutboundMessage(ChatRef("email", ANN), "hello"))
        assert len(sleep.waits) == 2
    finally:
        await channel.stop()


async def test_a_mail_that_arrives_while_another_is_taken_is_read_without_waiting_for_a_third(
    dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    inbox = Inbox()

    async def publish(message: InboundMessage) -> None:
        await inbox.publish(message)
        if message.text.endswith("first"):
            await dovecot.deliver(mail("second"))  # in the INBOX before the first is marked seen

    channel = EmailChannel(
        publish, email_config(dovecot, smtp_sink), tmp_path, tmp_path / "state", RetryPolicy(sleep=RecordedSleep())
    )
    await channel.start()
    try:
        await dovecot.deliver(mail("first"))
        first, second = await inbox.wait_for(2)
        assert first.text.endswith("first") and second.text.endswith("second")
    finally:
        await channel.stop()


async def test_a_mailbox_whose_reconnect_failed_reports_the_server_unavailable(
    dovecot: Dovecot, smtp_sink: SmtpSink
) -> None:
    mailbox = Mailbox(email_config(dovecot, smtp_sink).imap)  # never opened, as after a failed reconnect
    with pytest.raises(ChannelUnavailable, match="not connected"):
        await mailbox.unseen()


class RefusingOnce(Mailbox):
    """The real mailbox, except that its first search is refused, as a server in trouble answers NO."""

    refused = False

    async def unseen(self) -> list[str]:
        if not self.refused:
            self.refused = True
            raise ChannelError("IMAP search refused: [SERVERBUG] try again")
        return await super().unseen()


async def test_a_refused_command_is_met_by_reconnecting_and_the_reader_carries_on(
    dovecot: Dovecot, smtp_sink: SmtpSink, tmp_path: Path
) -> None:
    inbox, sleep = Inbox(), RecordedSleep()
    config = email_config(dovecot, smtp_sink)
    channel = EmailChannel(
        inbox.publish, config, tmp_path, tmp_path / "state", RetryPolicy(sleep=sleep), mailbox=RefusingOnce(config.imap)
    )
    assert isinstance(channel, ReportsLiveness)
    await channel.start()
    try:
        await dovecot.deliver(mail("still read"))
        (message,) = await inbox.wait_for(1)
        assert message.text.endswith("still read") and len(sleep.waits) == 1
        assert channel.liveness.age() < channel.liveness.timeout
    finally:
        await channel.stop()
