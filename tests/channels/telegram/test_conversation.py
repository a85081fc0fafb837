"""The Telegram adapter's inbound side against the fake Bot API: replies, group messages, albums, edits."""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.config.channels.telegram import TelegramConfig
from channels.telegram.channel import TelegramChannel
from tests.fakes.telegram_server import FakeTelegram
from tests.support.adapter import AdapterUnderTest
from tests.support.publishing import Published

GROUP = -1001
IN_GROUP = {"chat_id": GROUP, "chat_type": "supergroup"}


class AlbumWindow:
    """The album timer, as a gate the test opens once every part has arrived."""

    def __init__(self) -> None:
        self.passed = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        await self.passed.wait()


@pytest_asyncio.fixture
async def window() -> AlbumWindow:
    return AlbumWindow()


@pytest_asyncio.fixture
async def adapter(
    tmp_path: Path, telegram: FakeTelegram, window: AlbumWindow
) -> AsyncIterator[AdapterUnderTest[TelegramChannel]]:
    section = TelegramConfig(enabled=True, token=telegram.token, api_base=telegram.base_url)
    async with AdapterUnderTest(lambda publish: TelegramChannel(publish, section, tmp_path, album_sleep=window)) as bot:
        yield bot


@pytest_asyncio.fixture
def channel(adapter: AdapterUnderTest[TelegramChannel]) -> TelegramChannel:
    return adapter.channel


@pytest_asyncio.fixture
def published(adapter: AdapterUnderTest[TelegramChannel]) -> Published:
    return adapter.published


async def test_polling_asks_for_edits_and_button_presses(channel: TelegramChannel, telegram: FakeTelegram) -> None:
    await telegram.wait_for_call("getUpdates")
    polls = [fields for method, fields in telegram.calls if method == "getUpdates"]
    assert {"message", "edited_message", "callback_query"} <= set(polls[0]["allowed_updates"])


async def test_a_reply_brings_the_quoted_part_its_author_and_its_image(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    photo = telegram.photo(b"\xff\xd8 the cat picture", caption="my cat, and my dog", user_id=7, **IN_GROUP)
    telegram.text("@relay_bot which animal?", reply_to=photo["message"], quote="my dog", **IN_GROUP)
    _, asked = await published.wait_for(2)
    quote = asked.reply_to
    assert asked.mentioned and asked.text == "which animal?"
    assert (quote.text, quote.author_id, quote.author_name, quote.from_bot) == ("my dog", "7", "Ann", False)
    assert quote.platform_message_id == str(photo["message"]["message_id"])
    assert Path(quote.image.path).read_bytes() == b"\xff\xd8 the cat picture" and quote.image.kind == "image"


async def test_a_reply_to_the_bot_is_a_mention_quoting_the_bot(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    telegram.text("go on", reply_to_bot=True, **IN_GROUP)
    (message,) = await published.wait_for(1)
    assert message.mentioned and message.reply_to.from_bot and message.reply_to.text == "Earlier reply"


async def test_group_messages_without_a_mention_are_published_unmentioned(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    telegram.text("just chatting among ourselves", user_id=7, **IN_GROUP)
    telegram.text("@relay_bot and you?", **IN_GROUP)
    chatter, mention = await published.wait_for(2)
    assert not chatter.mentioned and not chatter.is_direct and chatter.text == "just chatting among ourselves"
    assert mention.mentioned


async def test_an_album_is_one_message_with_every_image_and_caption(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published, window: AlbumWindow
) -> None:
    parts = telegram.album([b"one", b"two", b"three"], ["first caption", "@relay_bot compare these"], **IN_GROUP)
    await telegram.wait_for_delivered(parts[-1]["update_id"])
    telegram.text("unrelated, after the album", user_id=7, **IN_GROUP)
    (unrelated,) = await published.wait_for(1)
    assert unrelated.text == "unrelated, after the album"  # the album is still open, nothing else waits for it
    window.passed.set()
    _, album = await published.wait_for(2)
    assert album.mentioned and album.text == "first caption\n\ncompare these"
    assert album.platform_message_id == str(parts[0]["message"]["message_id"])
    assert [Path(a.path).read_bytes() for a in album.attachments] == [b"one", b"two", b"three"]


async def test_open_albums_are_published_when_the_channel_stops(
    tmp_path: Path, telegram: FakeTelegram, window: AlbumWindow
) -> None:
    section = TelegramConfig(enabled=True, token=telegram.token, api_base=telegram.base_url)
    published = Published()
    channel = TelegramChannel(published, section, tmp_path, album_sleep=window)
    await channel.start()
    await telegram.wait_for_call("getUpdates")
    parts = telegram.album([b"one", b"two"], ["both"])
    await telegram.wait_for_delivered(parts[-1]["update_id"])
    await telegram.wait_for_call("getUpdates", 2)  # the next poll: both parts were handled and confirmed
    await channel.stop()
    (album,) = await published.wait_for(1)
    assert len(album.attachments) == 2 and album.text == "both"


async def test_each_edit_is_published_as_a_new_version_of_its_message(
    channel: TelegramChannel, telegram: FakeTelegram, published: Published
) -> None:
    original = telegram.text("what is 2+2?")
    telegram.edit(original, "what is 2+3?", edit_date=1000)
    telegram.edit(original, "what is 2+4?", edit_date=1001)
    first, edit, again = await published.wait_for(3)
    number = str(original["message"]["message_id"])
    assert first.edit_of is None and first.platform_message_id == number
    assert (edit.text, edit.edit_of, edit.platform_message_id) == ("what is 2+3?", number, f"{number}@1000")
    assert (again.edit_of, again.platform_message_id) == (number, f"{number}@1001")
