import asyncio

from bot.bus import ChatRef, InboundMessage, Quote
from channels.media import MediaRef
from channels.telegram.albums import AlbumGatherer, AlbumPart, merge_album
from tests.support.polling import until

CHAT = ChatRef("telegram", "-100")


class ManualTimer:
    """An injected sleep that ends only when the test says the window has passed."""

    def __init__(self) -> None:
        self.waiting: list[asyncio.Future[None]] = []

    async def __call__(self, seconds: float) -> None:
        future = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        await future

    def elapse(self) -> None:
        for future in self.waiting:
            if not future.done():
                future.set_result(None)
        self.waiting.clear()


def part(message_id: int, caption: str = "", mentioned: bool = False, chat: ChatRef = CHAT) -> AlbumPart:
    message = InboundMessage(chat, "42", caption, mentioned=mentioned, platform_message_id=str(message_id))
    return AlbumPart(message, MediaRef(f"f{message_id}", f"u{message_id}", "image", "image/jpeg", 10))


async def test_an_album_closes_one_window_after_its_last_part() -> None:
    delivered: list[list[AlbumPart]] = []

    async def deliver(parts: list[AlbumPart]) -> None:
        delivered.append(parts)

    timer = ManualTimer()
    albums = AlbumGatherer(deliver, sleep=timer)
    albums.add("a1", part(1, "first"))
    await until(lambda: len(timer.waiting) == 1, 2)
    albums.add("a1", part(2))
    albums.add("a1", part(2))  # a redelivered part is not counted twice
    await until(lambda: len(timer.waiting) == 2, 2)  # the first window was cut short by the second part
    timer.elapse()
    await until(lambda: bool(delivered), 2)
    assert [p.message.platform_message_id for p in delivered[0]] == ["1", "2"] and albums.open_albums == 0


async def test_albums_are_gathered_per_chat_and_album() -> None:
    delivered: list[list[AlbumPart]] = []

    async def deliver(parts: list[AlbumPart]) -> None:
        delivered.append(parts)

    albums = AlbumGatherer(deliver, sleep=ManualTimer())
    albums.add("a1", part(1))
    albums.add("a2", part(2))
    albums.add("a1", part(3, chat=ChatRef("telegram", "-200")))
    assert albums.open_albums == 3
    await albums.flush()
    assert sorted(len(parts) for parts in delivered) == [1, 1, 1] and albums.open_albums == 0


def test_merged_album_has_every_caption_and_image_and_counts_any_mention() -> None:
    quoted = Quote("earlier")
    first = part(11, "look at these")
    second = AlbumPart(
        InboundMessage(CHAT, "42", "and this one", mentioned=True, platform_message_id="12", reply_to=quoted),
        MediaRef("f12", "u12", "image", "image/jpeg", 10),
        MediaRef("q", "qu", "image", "image/jpeg", 5),
    )
    message, media, quote_image = merge_album([second, part(13), first])
    assert message.text == "look at these\n\nand this one"
    assert message.mentioned and message.platform_message_id == "11" and message.reply_to == quoted
    assert [m.source for m in media] == ["f11", "f12", "f13"] and quote_image.source == "q"
