"""LiveReply's failure paths: a failing preview never delays the final reply, a crashing final edit sends anew."""

import asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.errors import ChannelUnavailable
from bot.retry import RetryPolicy
from channels.streaming import LiveReply, StreamSettings

CHAT = ChatRef("telegram", "-100")


class FlakyWriter:
    """A LiveWriter whose updates fail as the test says and whose final edit may crash."""

    def __init__(self, finishes_in_place: bool = True, crash_on_finish: bool = False) -> None:
        self.finishes_in_place = finishes_in_place
        self.crash_on_finish = crash_on_finish
        self.shown: list[str] = []
        self.discarded = 0
        self.failed = asyncio.Event()

    async def show(self, text: str) -> None:
        self.failed.set()
        raise ChannelUnavailable("502 Bad Gateway")

    async def finish(self, text: str) -> bool:
        if self.crash_on_finish:
            raise KeyError("message_id")
        return True

    async def discard(self) -> None:
        self.discarded += 1


async def never_wakes(seconds: float) -> None:
    """A backoff far longer than any test: only cutting it short ends it."""
    await asyncio.Event().wait()


async def test_closing_cuts_a_failed_previews_backoff_short() -> None:
    writer = FlakyWriter(finishes_in_place=False)
    live = LiveReply(writer, StreamSettings(interval=0.0), RetryPolicy(sleep=never_wakes))
    live.add("Hello")
    await writer.failed.wait()
    async with asyncio.timeout(2):
        assert await live.finish(OutboundMessage(CHAT, "Hello there")) is False


async def test_a_crash_in_the_final_edit_sends_the_reply_anew() -> None:
    writer = FlakyWriter(crash_on_finish=True)
    live = LiveReply(writer, StreamSettings(interval=0.0), RetryPolicy(sleep=never_wakes))
    assert await live.finish(OutboundMessage(CHAT, "The answer")) is False
    assert writer.discarded == 1
