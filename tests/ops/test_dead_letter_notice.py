"""The owner's dead-letter notice: the first at once, then at most one an hour carrying everything meanwhile, messages
not answered as well as replies not delivered."""

from __future__ import annotations

import asyncio

from bot.bus import ChatRef
from bot.events import DeliveryFailed, EventBus, MessageFailed
from bot.ops.dead_letter_notice import DeadLetterNotice


class Hour:
    """A clock the test moves, and a sleep that waits until the test has moved it far enough."""

    def __init__(self) -> None:
        self.now = 0.0
        self.moved = asyncio.Event()
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        until = self.now + seconds
        while self.now < until:
            self.moved.clear()
            await self.moved.wait()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.moved.set()


def failed(n: int) -> DeliveryFailed:
    return DeliveryFailed("telegram:42", f"r{n}", None, "Forbidden: bot was blocked by the user")


async def test_new_dead_letters_reach_the_owner_at_most_once_an_hour() -> None:
    events, hour, sent = EventBus(), Hour(), []

    async def send(text: str) -> None:
        sent.append(text)

    notice = DeadLetterNotice(events, send, clock=hour.clock, sleep=hour.sleep)
    notice.start()
    events.emit(failed(1))
    await asyncio.sleep(0)
    assert sent == ["1 reply could not be delivered; they wait as dead letters: see them with `relaybot queue list`."]

    hour.advance(600)
    for n in (2, 3, 4):
        events.emit(failed(n))
    events.emit(MessageFailed(ChatRef("telegram", "42"), "m1", "its turn stopped the process twice (the crash limit)"))
    for _ in range(4):
        await asyncio.sleep(0)
    assert len(sent) == 1 and hour.waits == [3000.0]  # the rest of the hour
    hour.advance(2999)
    await asyncio.sleep(0)
    assert len(sent) == 1
    hour.advance(1)
    for _ in range(3):
        await asyncio.sleep(0)
    assert sent[1].startswith("1 message could not be answered and 3 replies could not be delivered;")
    await notice.stop()
    events.emit(failed(5))
    await asyncio.sleep(0)
    assert len(sent) == 2  # stopped: nothing more
