import asyncio
import itertools
from typing import ClassVar

from bot.bus import ChatRef, LocalBus, OutboundMessage
from bot.errors import BotError, ChannelUnavailable, DeliveryAmbiguous, RateLimited
from bot.events import EventBus
from bot.retry import RetryPolicy
from channels.base import Channel
from channels.gateway.outbound import ChannelOutbox
from tests.support.polling import until

A, B, C, D, E = (ChatRef("fake", name) for name in "abcde")


class ScriptedChannel(Channel):
    """Records what it sent; raises the scripted failures first, per text."""

    name: ClassVar[str] = "fake"

    def __init__(self, failures: dict[str, list[BotError]]) -> None:
        self.failures = failures
        self.sent: list[str] = []
        self.attempts: list[str] = []

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def send(self, message: OutboundMessage) -> None:
        self.attempts.append(message.text)
        if self.failures.get(message.text):
            raise self.failures[message.text].pop(0)
        self.sent.append(message.text)


class HeldSleep:
    """An injected sleep that waits until released, and records what it was asked to wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.asked = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.waits.append(round(seconds))
        self.asked.set()
        await self.release.wait()


async def outbox_for(channel: Channel, sleep: HeldSleep, concurrency: int = 1) -> tuple[ChannelOutbox, LocalBus]:
    bus = LocalBus()
    await bus.start()
    ready = asyncio.Event()
    ready.set()
    return ChannelOutbox(channel, bus, EventBus(), ready, concurrency, RetryPolicy(sleep=sleep)), bus


async def submit(outbox: ChannelOutbox, bus: LocalBus, chat: ChatRef, text: str) -> None:
    message = OutboundMessage(chat, text)
    await bus.publish_outbound(message)
    outbox.submit(message)


async def test_a_rate_limited_chat_waits_alone_and_holds_no_send_slot() -> None:
    channel, sleep = ScriptedChannel({"a1": [RateLimited(5)]}), HeldSleep()
    outbox, bus = await outbox_for(channel, sleep, concurrency=1)
    await submit(outbox, bus, A, "a1")
    await submit(outbox, bus, A, "a2")
    await submit(outbox, bus, B, "b1")
    assert await outbox.flush(0.2) is False
    assert channel.sent == ["b1"] and sleep.waits == [5]
    sleep.release.set()
    assert await outbox.flush(1)
    assert channel.sent == ["b1", "a1", "a2"]
    assert (await bus.stats()).outbound_pending == 0


async def test_a_global_rate_limit_pauses_every_chat() -> None:
    channel, sleep = ScriptedChannel({"a1": [RateLimited(5, whole_bot=True)]}), HeldSleep()
    outbox, bus = await outbox_for(channel, sleep, concurrency=2)
    await submit(outbox, bus, A, "a1")
    await asyncio.wait_for(sleep.asked.wait(), 5)  # a1 met the rate limit
    await submit(outbox, bus, B, "b1")
    assert await outbox.flush(0.2) is False
    assert channel.sent == [] and sleep.waits == [5, 5]
    sleep.release.set()
    assert await outbox.flush(1)
    assert sorted(channel.sent) == ["a1", "b1"]


async def test_an_ambiguous_send_is_retried_once_and_counted() -> None:
    drop = DeliveryAmbiguous("connection dropped")
    channel, sleep = ScriptedChannel({"a1": [drop], "a2": [drop, drop]}), HeldSleep()
    sleep.release.set()
    outbox, bus = await outbox_for(channel, sleep)
    await submit(outbox, bus, A, "a1")
    await submit(outbox, bus, A, "a2")
    assert await outbox.flush(1)
    assert channel.attempts == ["a1", "a1", "a2", "a2"] and channel.sent == ["a1"]
    stats = await bus.stats()
    assert (stats.ambiguous_sends, stats.outbound_failed) == (3, 1)


async def test_a_5xx_is_retried_at_once_then_after_a_backoff() -> None:
    channel = ScriptedChannel({"a1": [ChannelUnavailable("502")], "a2": [ChannelUnavailable("502")] * 2})
    sleep = HeldSleep()
    outbox, bus = await outbox_for(channel, sleep)
    await submit(outbox, bus, A, "a1")
    assert await outbox.flush(1)  # the held sleep was never asked for: the retry went at once
    assert channel.sent == ["a1"] and sleep.waits == []
    await submit(outbox, bus, A, "a2")
    await asyncio.wait_for(sleep.asked.wait(), 5)  # its second failure backs off
    assert channel.attempts == ["a1", "a1", "a2", "a2"] and len(sleep.waits) == 1
    sleep.release.set()
    assert await outbox.flush(1)
    assert channel.sent == ["a1", "a2"]


async def test_rate_limits_spend_no_attempt_so_a_reply_outlasts_a_burst_of_them() -> None:
    failures: list[BotError] = [RateLimited(1)] * 6 + [ChannelUnavailable("502")] * 4
    channel, sleep = ScriptedChannel({"a1": failures}), HeldSleep()
    sleep.release.set()
    outbox, bus = await outbox_for(channel, sleep)
    await submit(outbox, bus, A, "a1")
    assert await outbox.flush(1)
    assert channel.sent == ["a1"] and len(channel.attempts) == 11
    assert (await bus.stats()).outbound_failed == 0


async def test_a_live_reply_being_finished_holds_no_send_slot() -> None:
    channel, held = ScriptedChannel({}), asyncio.Event()
    bus = LocalBus()
    await bus.start()
    ready = asyncio.Event()
    ready.set()

    async def finish_live(message: OutboundMessage) -> bool:
        if message.chat == A:
            await held.wait()  # its live reply's last update is still in flight
        return False

    outbox = ChannelOutbox(channel, bus, EventBus(), ready, 1, RetryPolicy(), finish_live)
    await submit(outbox, bus, A, "a1")
    await submit(outbox, bus, B, "b1")
    assert await outbox.flush(0.2) is False
    assert channel.sent == ["b1"]
    held.set()
    assert await outbox.flush(1)
    assert channel.sent == ["b1", "a1"]


class GatedChannel(ScriptedChannel):
    """A ScriptedChannel whose sends of the gated texts wait until their gate opens."""

    def __init__(self, failures: dict[str, list[BotError]], gates: dict[str, asyncio.Event]) -> None:
        super().__init__(failures)
        self.gates = gates

    async def send(self, message: OutboundMessage) -> None:
        if (gate := self.gates.get(message.text)) is not None:
            await gate.wait()
        await super().send(message)


async def test_a_chat_held_up_by_a_rate_limit_catches_up_before_newer_replies_of_other_chats() -> None:
    gates = {name: asyncio.Event() for name in ("c1", "d1", "b1")}
    channel, sleep = GatedChannel({"a1": [RateLimited(1)]}, gates), HeldSleep()
    bus = LocalBus()
    await bus.start()
    ready, ticks = asyncio.Event(), itertools.count()
    ready.set()
    outbox = ChannelOutbox(channel, bus, EventBus(), ready, 2, RetryPolicy(sleep=sleep), clock=lambda: next(ticks))
    await submit(outbox, bus, A, "a1")
    await asyncio.wait_for(sleep.asked.wait(), 5)  # a1 waits out its retry_after; a2 waits behind it
    await submit(outbox, bus, A, "a2")
    for chat, text in ((C, "c1"), (D, "d1"), (B, "b1"), (E, "e1")):  # c1 and d1 hold both slots
        await submit(outbox, bus, chat, text)
    await until(lambda: outbox.sends_waiting == 2, timeout=5)
    sleep.release.set()
    await until(lambda: outbox.sends_waiting == 3, timeout=5)
    gates["c1"].set()  # a1 goes; then b1 takes its slot and holds it
    await until(lambda: channel.sent == ["c1", "a1"] and outbox.sends_waiting == 2, timeout=5)
    gates["d1"].set()  # a2, queued before e1, goes first though it asked for a slot after e1
    await until(lambda: len(channel.sent) == 5, timeout=5)
    gates["b1"].set()
    assert await outbox.flush(1)
    assert channel.sent == ["c1", "a1", "d1", "a2", "e1", "b1"]
