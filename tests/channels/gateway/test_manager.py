import asyncio
from pathlib import Path
from typing import ClassVar

from bot.bus import ChatRef, InboundMessage, LocalBus, OutboundMessage
from bot.errors import ChannelError
from bot.events import DeliveryFailed, EventBus
from bot.retry import RetryPolicy
from channels.base import Channel
from channels.gateway.manager import ChannelManager


class MemoryChannel(Channel):
    """A channel kept in memory: `fail_starts` failed starts, then records what it is sent."""

    name: ClassVar[str] = "memory"

    def __init__(self, name: str, fail_starts: int = 0, gate: asyncio.Event | None = None) -> None:
        self.name = name  # type: ignore[misc]
        self.fail_starts = fail_starts
        self.starts = 0
        self.gate = gate
        self.sent: list[OutboundMessage] = []
        self.delivered = asyncio.Event()

    async def start(self) -> None:
        self.starts += 1
        if self.starts <= self.fail_starts:
            raise ConnectionError("endpoint down")

    async def stop(self) -> None:
        pass

    async def send(self, message: OutboundMessage) -> None:
        if self.gate:
            await self.gate.wait()
        if message.text == "permanent failure":
            raise ChannelError("chat not found")
        self.sent.append(message)
        self.delivered.set()


def manager_with(*channels: Channel, events: EventBus | None = None) -> tuple[ChannelManager, LocalBus]:
    bus = LocalBus()
    manager = ChannelManager(bus, events, start_retry=RetryPolicy(base_delay=0.01, max_delay=0.02))
    for channel in channels:
        manager.add(channel)
    return manager, bus


async def test_a_channel_that_fails_to_start_is_retried_without_stopping_others() -> None:
    flaky, healthy = MemoryChannel("flaky", fail_starts=3), MemoryChannel("healthy")
    manager, bus = manager_with(flaky, healthy)
    await manager.start()
    await bus.publish_outbound(OutboundMessage(ChatRef("healthy", "1"), "hello"))
    await asyncio.wait_for(healthy.delivered.wait(), 5)
    await asyncio.wait_for(manager.ready("flaky"), 5)
    await bus.publish_outbound(OutboundMessage(ChatRef("flaky", "1"), "queued while down"))
    await asyncio.wait_for(flaky.delivered.wait(), 5)
    await manager.stop()
    assert flaky.starts == 4


async def test_a_slow_channel_never_delays_another() -> None:
    gate = asyncio.Event()
    slow, fast = MemoryChannel("slow", gate=gate), MemoryChannel("fast")
    manager, bus = manager_with(slow, fast)
    await manager.start()
    await bus.publish_outbound(OutboundMessage(ChatRef("slow", "1"), "stuck"))
    await bus.publish_outbound(OutboundMessage(ChatRef("fast", "1"), "goes through"))
    await asyncio.wait_for(fast.delivered.wait(), 5)
    assert slow.sent == []
    gate.set()
    await asyncio.wait_for(slow.delivered.wait(), 5)
    await manager.stop()


async def test_each_message_id_is_sent_at_most_once() -> None:
    channel = MemoryChannel("memory")
    manager, bus = manager_with(channel)
    await manager.start()
    message = OutboundMessage(ChatRef("memory", "1"), "once")
    await bus.publish_outbound(message)
    await bus.publish_outbound(message)
    await bus.publish_outbound(OutboundMessage(ChatRef("memory", "1"), "barrier"))
    while len(channel.sent) < 2:
        channel.delivered.clear()
        await asyncio.wait_for(channel.delivered.wait(), 5)
    await manager.stop()
    assert [m.text for m in channel.sent] == ["once", "barrier"]


async def test_permanent_failure_is_reported_as_an_event() -> None:
    events = EventBus()
    failures: list[DeliveryFailed] = []
    events.subscribe(lambda event: failures.append(event) if isinstance(event, DeliveryFailed) else None)
    channel = MemoryChannel("memory")
    manager, bus = manager_with(channel, events=events)
    await manager.start()
    await bus.publish_outbound(OutboundMessage(ChatRef("memory", "9"), "permanent failure"))
    await bus.publish_outbound(OutboundMessage(ChatRef("memory", "9"), "next one"))
    await asyncio.wait_for(channel.delivered.wait(), 5)
    await manager.stop()
    assert failures[0].session_key == "memory:9" and "chat not found" in failures[0].error


async def test_inbound_duplicates_are_published_once() -> None:
    manager, bus = manager_with(MemoryChannel("memory"))
    publish = manager.publisher("memory")
    first = InboundMessage(ChatRef("memory", "1"), sender_id="u", text="hi", platform_message_id="m1")
    await publish(first)
    await publish(InboundMessage(ChatRef("memory", "1"), sender_id="u", text="hi", platform_message_id="m1"))
    await publish(InboundMessage(ChatRef("memory", "2"), sender_id="u", text="hi", platform_message_id="m1"))
    assert (await bus.consume_inbound()).id == first.id
    assert (await bus.consume_inbound()).chat.chat_id == "2"


async def test_a_flooding_guest_is_dropped_before_the_model_and_told_once() -> None:
    from bot.access.flood import SenderRateLimit
    from bot.bus import Trust

    now = [0.0]
    channel = MemoryChannel("memory")
    bus = LocalBus()
    manager = ChannelManager(bus, rate_limit=SenderRateLimit(2, clock=lambda: now[0]))
    manager.add(channel)
    await manager.start()
    publish = manager.publisher("memory")
    chat = ChatRef("memory", "g1")
    for i in range(5):
        await publish(InboundMessage(chat, sender_id="guest", text=f"spam {i}", trust=Trust.GUEST))
    for i in range(5):
        await publish(InboundMessage(chat, sender_id="boss", text=f"owner {i}", trust=Trust.OWNER))
    now[0] += 60
    await publish(InboundMessage(chat, sender_id="guest", text="later", trust=Trust.GUEST))
    await asyncio.wait_for(channel.delivered.wait(), 5)
    await manager.stop()
    passed = [(await asyncio.wait_for(bus.consume_inbound(), 1)).text for _ in range(8)]
    assert passed == ["spam 0", "spam 1", *(f"owner {i}" for i in range(5)), "later"]
    assert len(channel.sent) == 1 and "more than 2 messages a minute" in channel.sent[0].text


class DismissingChannel(MemoryChannel):
    """A MemoryChannel that shows answers coming, so it records the messages it is told get none."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.dismissed: list[str] = []

    async def dismiss(self, chat: ChatRef, message_id: str) -> None:
        self.dismissed.append(message_id)


async def test_a_message_that_gets_no_answer_is_dismissed_and_one_that_does_is_not(tmp_path: Path) -> None:
    from bot.access.pairing import PairingBook
    from bot.access.policy import AccessPolicy
    from bot.config.channels.base import ChannelSection
    from tests.support.polling import until

    channel = DismissingChannel("memory")
    bus = LocalBus()
    section = ChannelSection(dm_policy="pairing")
    policy = AccessPolicy("memory", ["memory:boss"], section, PairingBook(tmp_path / "pairing.json"))
    manager = ChannelManager(bus, access={"memory": policy})
    manager.add(channel)
    await manager.start()
    publish = manager.publisher("memory")
    group, dm = ChatRef("memory", "g1"), ChatRef("memory", "d1")
    in_group = {"is_direct": False, "mentioned": True}
    await publish(InboundMessage(group, sender_id="stranger", text="/new", platform_message_id="1", **in_group))
    await publish(InboundMessage(dm, sender_id="stranger", text="/new", platform_message_id="2"))
    await publish(InboundMessage(group, sender_id="boss", text="/new", platform_message_id="3", **in_group))
    await until(lambda: channel.dismissed == ["1"] and len(channel.sent) == 1, timeout=5)
    served = await asyncio.wait_for(bus.consume_inbound(), 1)
    await manager.stop()
    assert served.platform_message_id == "3"
    (pairing,) = channel.sent
    assert "pairing code" in pairing.text and pairing.reply_to_platform_id == "2"  # answers the message, wherever


async def test_stopping_twice_is_harmless() -> None:
    """A gateway that loses a channel lease stops its channels, and stops them again on its way out."""
    events = EventBus()
    manager, _ = manager_with(MemoryChannel("one"), events=events)
    await manager.start()
    await manager.stop()
    await manager.stop()
