"""The Signal channel against the fake daemon: group files, quotes as replies, typing, a daemon that goes away."""

import base64
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.bus import Attachment, ChatRef, OutboundMessage
from bot.errors import ChannelUnavailable
from tests.fakes.signal_daemon import FakeSignalDaemon
from tests.support.adapter import AdapterUnderTest
from tests.support.selfhosted import signal_adapter

ANN = "+4915100000042"


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeSignalDaemon]:
    async with FakeSignalDaemon() as daemon:
        yield daemon


@pytest_asyncio.fixture
async def bot(fake: FakeSignalDaemon, tmp_path: Path) -> AsyncIterator[AdapterUnderTest]:
    async with signal_adapter(fake, tmp_path / "media", reconnect_delay=0.01, name="Relay") as running:
        yield running


async def test_a_photo_in_the_group_is_fetched_from_the_daemon_and_attached(
    bot: AdapterUnderTest, fake: FakeSignalDaemon
) -> None:
    fake.attachments["cat1.jpg"] = (b"\xff\xd8 a cat", "image/jpeg", "cat.jpg")
    entry = {"contentType": "image/jpeg", "filename": "cat.jpg", "id": "cat1.jpg", "size": 9}
    fake.group_message("relay, what is this?", ANN, mention=False, attachments=[entry])
    message = await bot.next()
    assert message.mentioned and message.chat == ChatRef("signal", fake.group_id)
    (photo,) = message.attachments
    assert photo.kind == "image" and Path(photo.path).read_bytes() == b"\xff\xd8 a cat"
    assert ("getAttachment", {"id": "cat1.jpg", "groupId": fake.group_id}) in fake.calls


async def test_a_file_the_bot_sends_travels_as_a_data_uri_with_its_name(
    bot: AdapterUnderTest, fake: FakeSignalDaemon, tmp_path: Path
) -> None:
    report = tmp_path / "report.csv"
    report.write_bytes(b"a,b\n1,2\n")
    chat = ChatRef("signal", fake.group_id)
    await bot.channel.send(OutboundMessage(chat, "", files=(Attachment(str(report), "text/csv"),)))
    await fake.wait_for_sent(1)
    (sent,) = fake.sent
    header, _, data = sent["attachments"][0].partition(",")
    assert header == "data:text/csv;filename=report.csv;base64" and base64.b64decode(data) == b"a,b\n1,2\n"
    assert sent["groupId"] == fake.group_id and "recipient" not in sent


async def test_a_reply_quotes_the_message_it_answers(bot: AdapterUnderTest, fake: FakeSignalDaemon) -> None:
    fake.dm("what time is it?", ANN)
    asked = await bot.next()
    reply = OutboundMessage(asked.chat, "Noon.", reply_to_platform_id=asked.platform_message_id)
    await bot.channel.send(reply)
    await fake.wait_for_sent(1)
    (sent,) = fake.sent
    assert sent["recipient"] == [ANN] and sent["message"] == "Noon."
    assert f"{sent['quoteAuthor']}:{sent['quoteTimestamp']}" == asked.platform_message_id


async def test_markdown_goes_out_as_text_styles(bot: AdapterUnderTest, fake: FakeSignalDaemon) -> None:
    await bot.channel.send(OutboundMessage(ChatRef("signal", ANN), "This is **important**."))
    await fake.wait_for_sent(1)
    (sent,) = fake.sent
    assert sent["message"] == "This is important." and sent["textStyle"] == ["8:9:BOLD"]


async def test_a_message_taken_in_is_marked_read(bot: AdapterUnderTest, fake: FakeSignalDaemon) -> None:
    event = fake.dm("hi", ANN)
    await bot.next()
    await fake.wait_until(lambda: bool(fake.receipts), "a read receipt")
    stamp = event["envelope"]["timestamp"]
    assert fake.receipts == [{"recipient": ANN, "targetTimestamp": [stamp], "type": "read"}]


async def test_typing_is_shown_in_the_chat(bot: AdapterUnderTest, fake: FakeSignalDaemon) -> None:
    await bot.channel.show_typing(ChatRef("signal", fake.group_id))  # type: ignore[attr-defined]
    assert fake.typing == [{"groupId": fake.group_id}]


async def test_after_the_daemon_restarts_the_stream_is_reopened_and_read_on(
    bot: AdapterUnderTest, fake: FakeSignalDaemon
) -> None:
    await fake.stop()
    await fake.start(fake.port)
    fake.dm("still there?", ANN)
    message = await bot.next()
    assert message.text == "still there?" and fake.streams == 2


async def test_a_daemon_that_is_down_fails_the_start_saying_where(tmp_path: Path) -> None:
    async with FakeSignalDaemon() as fake:
        await fake.stop()
        adapter = signal_adapter(fake, tmp_path / "media")
        with pytest.raises(ChannelUnavailable, match=f"not reachable at {fake.url}"):
            await adapter.channel.start()
