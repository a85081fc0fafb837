"""The WhatsApp channel against the fake Graph API, its webhook served on 127.0.0.1 as the gateway serves it."""

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import ClientSession, web

from bot.bus import Attachment, ChatRef, Choice, InboundMessage, OutboundMessage, Press
from bot.config.channels.whatsapp import WhatsAppConfig
from bot.errors import BusClosed, ChannelError, WindowClosed
from bot.retry import RetryPolicy
from channels.whatsapp.channel import WhatsAppChannel
from tests.fakes.loopback import LoopbackSite
from tests.fakes.whatsapp_server import FakeWhatsApp, graph_error
from tests.support.harness import RecordedSleep

USER = "4915100000001"
CHAT = ChatRef("whatsapp", USER)


class Running:
    """A started channel, its webhook's URL, and what it published."""

    def __init__(self, channel: WhatsAppChannel, url: str, sleep: RecordedSleep) -> None:
        self.channel, self.url, self.sleep = channel, url, sleep
        self.published: list[InboundMessage] = []
        self.arrived = asyncio.Condition()
        self.closed = False  # the bus refuses, as while the gateway stops

    async def publish(self, message: InboundMessage) -> None:
        if self.closed:
            raise BusClosed("stopping")
        async with self.arrived:
            self.published.append(message)
            self.arrived.notify_all()

    async def wait_published(self, count: int) -> list[InboundMessage]:
        async with asyncio.timeout(10), self.arrived:
            await self.arrived.wait_for(lambda: len(self.published) >= count)
        return self.published


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeWhatsApp]:
    async with FakeWhatsApp() as running:
        yield running


def config_for(fake: FakeWhatsApp, **extra: object) -> WhatsAppConfig:
    return WhatsAppConfig.model_validate(
        {
            "enabled": True,
            "phone_number_id": fake.phone_number_id,
            "access_token": fake.token,
            "app_secret": fake.app_secret,
            "verify_token": "verify-me",
            "api_base": fake.api_base,
            **extra,
        }
    )


async def serve(fake: FakeWhatsApp, tmp_path: Path, **extra: object) -> tuple[Running, LoopbackSite]:
    sleep = RecordedSleep()
    running = Running(None, "", sleep)  # type: ignore[arg-type]
    channel = WhatsAppChannel(running.publish, config_for(fake, **extra), tmp_path, RetryPolicy(sleep=sleep))
    app = web.Application()
    app.router.add_routes(channel.webhook_routes())
    site = LoopbackSite(app)
    port = await site.start()
    await channel.start()
    running.channel, running.url = channel, f"http://127.0.0.1:{port}/whatsapp/webhook"
    fake.webhook_url = running.url
    return running, site


@pytest_asyncio.fixture
async def bot(fake: FakeWhatsApp, tmp_path: Path) -> AsyncIterator[Running]:
    running, site = await serve(fake, tmp_path)
    yield running
    await running.channel.stop()
    await site.stop()


async def test_verification_handshake_echoes_the_challenge_for_the_verify_token(bot: Running) -> None:
    query = {"hub.mode": "subscribe", "hub.challenge": "8125", "hub.verify_token": "verify-me"}
    async with ClientSession() as http:
        async with http.get(bot.url, params=query) as good:
            assert (good.status, await good.text()) == (200, "8125")
        async with http.get(bot.url, params={**query, "hub.verify_token": "guess"}) as bad:
            assert bad.status == 403


async def test_unsigned_and_missigned_posts_are_refused_with_401(bot: Running, fake: FakeWhatsApp) -> None:
    message = fake.new_message(USER, "text", {"body": "forged"})
    assert await fake.deliver(fake.message_payload(message), signature=None) == 401
    assert await fake.deliver(fake.message_payload(message), signature="sha256=" + "0" * 64) == 401
    await fake.text("genuine")
    assert [m.text for m in bot.published] == ["genuine"]


async def test_a_message_is_published_before_the_200_and_a_duplicate_is_dropped(
    bot: Running, fake: FakeWhatsApp
) -> None:
    message = await fake.text("hello")
    assert [m.text for m in bot.published] == ["hello"]  # journaled before the webhook was answered
    assert await fake.deliver(fake.message_payload(message)) == 200
    await fake.text("next")
    assert [m.text for m in bot.published] == ["hello", "next"]
    assert bot.published[0].chat == CHAT and bot.published[0].sender_name == "Ann"


async def test_malformed_bodies_are_answered_200_and_warned_about_once(
    bot: Running, fake: FakeWhatsApp, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="channels.whatsapp.channel"):
        assert await fake.deliver(b"{not json") == 200
        assert await fake.deliver(b"{not json either") == 200
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING and "malformed" in r.message]
    assert len(warnings) == 1 and bot.published == []


async def test_a_message_is_marked_read_typing_shows_and_the_reply_quotes_it(bot: Running, fake: FakeWhatsApp) -> None:
    incoming = await fake.text("question")
    await fake.wait_for_reads(1)  # the read receipt, once the message is in the inbox
    assert fake.reads[0] == {"messaging_product": "whatsapp", "status": "read", "message_id": incoming["id"]}
    await bot.channel.show_typing(CHAT)
    await fake.wait_for_reads(2)
    assert fake.reads[1]["message_id"] == incoming["id"] and fake.reads[1]["typing_indicator"] == {"type": "text"}
    await bot.channel.send(OutboundMessage(CHAT, "**answer**", reply_to_platform_id=incoming["id"]))
    (sent,) = await fake.wait_for_sent(1)
    assert sent["text"]["body"] == "*answer*" and sent["context"] == {"message_id": incoming["id"]}
    await fake.text("about that", context=sent["_id"])
    quote = bot.published[-1].reply_to
    assert quote is not None and quote.from_bot and quote.text == "*answer*"


async def test_long_text_is_split_within_4096(bot: Running, fake: FakeWhatsApp) -> None:
    await bot.channel.send(OutboundMessage(CHAT, "\n\n".join(["word " * 300] * 5)))
    sent = await fake.wait_for_sent(2)
    assert len(sent) >= 2 and all(len(s["text"]["body"]) <= 4096 for s in sent)


async def test_photo_is_downloaded_and_attached(bot: Running, fake: FakeWhatsApp, tmp_path: Path) -> None:
    await fake.image(b"\xff\xd8jpeg-bytes", caption="what is this?")
    (message,) = await bot.wait_published(1)
    (attachment,) = message.attachments
    assert message.text == "what is this?" and attachment.kind == "image"
    assert Path(attachment.path).read_bytes() == b"\xff\xd8jpeg-bytes"
    assert Path(attachment.path).is_relative_to(tmp_path / "whatsapp")


async def test_file_is_uploaded_and_sent_as_a_document_with_caption(
    bot: Running, fake: FakeWhatsApp, tmp_path: Path
) -> None:
    report = tmp_path / "report.pdf"
    report.write_bytes(b"%PDF-1.4 tiny")
    await bot.channel.send(OutboundMessage(CHAT, "Here it is", files=(Attachment(str(report), "application/pdf"),)))
    (sent,) = await fake.wait_for_sent(1)
    document = sent["document"]
    assert (document["caption"], document["filename"]) == ("Here it is", "report.pdf")
    assert fake.uploads[document["id"]][0] == b"%PDF-1.4 tiny"


async def test_three_choices_are_reply_buttons_and_a_tap_is_a_press(bot: Running, fake: FakeWhatsApp) -> None:
    choices = (Choice("yes", "Yes"), Choice("no", "No"), Choice("later", "Ask me again much later"))
    await bot.channel.send(OutboundMessage(CHAT, "Run it?", choices=choices, prompt_id="p1"))
    (sent,) = await fake.wait_for_sent(1)
    interactive = sent["interactive"]
    assert interactive["type"] == "button" and interactive["body"]["text"] == "Run it?"
    assert [b["reply"]["title"] for b in interactive["action"]["buttons"]] == ["Yes", "No", "Ask me again much l…"]
    await fake.press(sent, 0)
    assert bot.published[-1].press == Press("p1", "yes", sent["_id"]) and bot.published[-1].text == "Yes"


async def test_five_choices_are_a_list(bot: Running, fake: FakeWhatsApp) -> None:
    choices = tuple(Choice(f"c{i}", f"Option {i}") for i in range(5))
    await bot.channel.send(OutboundMessage(CHAT, "Pick one", choices=choices, prompt_id="p2"))
    (sent,) = await fake.wait_for_sent(1)
    assert sent["interactive"]["type"] == "list"
    await fake.press(sent, 4)
    assert bot.published[-1].press == Press("p2", "c4", sent["_id"])


async def test_outside_the_window_the_template_goes_instead(
    fake: FakeWhatsApp, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake.closed_windows.add(USER)
    running, site = await serve(fake, tmp_path, template={"name": "reconnect", "language": "de"})
    try:
        with caplog.at_level(logging.WARNING):
            await running.channel.send(OutboundMessage(CHAT, "late answer"))
        (sent,) = await fake.wait_for_sent(1)
        assert sent["type"] == "template" and sent["template"] == {"name": "reconnect", "language": {"code": "de"}}
        assert "24-hour window" in caplog.text and "131047" in caplog.text
    finally:
        await running.channel.stop()
        await site.stop()


async def test_outside_the_window_without_a_template_the_send_fails(bot: Running, fake: FakeWhatsApp) -> None:
    fake.closed_windows.add(USER)
    with pytest.raises(WindowClosed):
        await bot.channel.send(OutboundMessage(CHAT, "late answer"))
    assert fake.sent == []


async def test_throttling_is_waited_out_and_retried(bot: Running, fake: FakeWhatsApp) -> None:
    fake.failures.append(graph_error(400, 130429, "(#130429) Rate limit hit"))
    await bot.channel.send(OutboundMessage(CHAT, "after the wait"))
    (sent,) = await fake.wait_for_sent(1)
    assert sent["text"]["body"] == "after the wait" and bot.sleep.waits == [5.0]


async def test_a_refused_token_fails_start(fake: FakeWhatsApp, tmp_path: Path) -> None:
    channel = WhatsAppChannel(bot_publish, config_for(fake, access_token="wrong"), tmp_path)
    with pytest.raises(ChannelError, match="code 190"):
        await channel.start()


async def bot_publish(message: InboundMessage) -> None:
    raise AssertionError("nothing is published before start")


async def test_a_message_not_journaled_is_taken_when_meta_delivers_it_again(bot: Running, fake: FakeWhatsApp) -> None:
    bot.closed = True
    message = fake.new_message(USER, "text", {"body": "keep me"})
    assert await fake.deliver(fake.message_payload(message)) == 503  # Meta keeps it and delivers it again
    bot.closed = False
    assert await fake.deliver(fake.message_payload(message)) == 200
    assert [m.text for m in bot.published] == ["keep me"]
