"""Two bots of one platform behind one manager: each is its own channel, keyed by (platform, account)."""

import asyncio

from bot.bus import ChatRef, InboundMessage, OutboundMessage
from bot.events import DeliveryFailed, EventBus, TurnStarted
from tests.channels.gateway.test_manager import MemoryChannel, manager_with


class BotChannel(MemoryChannel):
    """A memory channel that is one named bot of the `chat` platform, and shows typing."""

    def __init__(self, account: str | None, fail_starts: int = 0) -> None:
        super().__init__("chat", fail_starts)
        self.account = account
        self.typing: list[ChatRef] = []

    async def show_typing(self, chat: ChatRef) -> None:
        self.typing.append(chat)


async def test_replies_typing_and_health_follow_the_chats_account() -> None:
    events = EventBus()
    default, work = BotChannel(None), BotChannel("work", fail_starts=1)
    manager, bus = manager_with(default, work, events=events)
    await manager.start()
    await asyncio.wait_for(manager.ready("chat@work"), 5)
    assert set(manager.health()) == {"chat", "chat@work"}
    await bus.publish_outbound(OutboundMessage(ChatRef("chat", "1", account="work"), "from work"))
    await bus.publish_outbound(OutboundMessage(ChatRef("chat", "1"), "from the default bot"))
    await asyncio.wait_for(work.delivered.wait(), 5)
    await asyncio.wait_for(default.delivered.wait(), 5)
    events.emit(TurnStarted(ChatRef("chat", "1", account="work"), "t1"))
    await asyncio.wait_for(_until(lambda: bool(work.typing)), 5)
    await manager.stop()
    assert [m.text for m in work.sent] == ["from work"]
    assert [m.text for m in default.sent] == ["from the default bot"]
    assert default.typing == [] and work.typing[0].account == "work"
    assert manager.health()["chat@work"].failures == 1 and manager.health()["chat"].failures == 0


async def test_a_reply_for_a_bot_that_is_not_running_fails_and_says_which() -> None:
    events = EventBus()
    failed: list[DeliveryFailed] = []
    events.subscribe(failed.append, DeliveryFailed)
    manager, bus = manager_with(BotChannel(None), events=events)
    await manager.start()
    await bus.publish_outbound(OutboundMessage(ChatRef("chat", "1", account="gone"), "lost"))
    await asyncio.wait_for(_until(lambda: bool(failed)), 5)
    await manager.stop()
    assert failed[0].session_key == "chat@gone:1" and "'chat@gone'" in failed[0].error


async def test_a_bot_publishes_under_its_own_key_and_its_chats_carry_its_account() -> None:
    work = BotChannel("work")
    manager, bus = manager_with(BotChannel(None), work)
    await manager.start()
    await manager.publisher(work.key)(work.own(InboundMessage(ChatRef("chat", "5"), "5", "hi")))
    received = await asyncio.wait_for(bus.consume_inbound(), 5)
    await manager.stop()
    assert received.chat == ChatRef("chat", "5", account="work")
    assert manager.counts()["chat@work"].inbound == 1 and manager.counts()["chat"].inbound == 0


async def _until(check: object) -> None:
    assert callable(check)
    while not check():
        await asyncio.sleep(0)
