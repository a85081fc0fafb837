"""Reactions as status and command menus, through the manager with a tiny channel that has both abilities."""

import asyncio
from collections.abc import Sequence
from typing import ClassVar

from bot.bus import ChatRef, InboundMessage, LocalBus, OutboundMessage, Press
from bot.commands.catalogue import CommandSpec
from bot.events import Delivered, DeliveryFailed, EventBus, TurnFinished, TurnStarted
from bot.retry import RetryPolicy
from channels.abilities import ReactionStatus
from channels.base import Channel
from channels.gateway.manager import ChannelManager
from channels.gateway.reactions import ReactionMode
from tests.support.polling import until

GROUP = ChatRef("fake", "g1")
DM = ChatRef("fake", "d1")
MENU = (CommandSpec("new", "Start over"), CommandSpec("activation", "Groups only", "groups"))


class ReactingChannel(Channel):
    """Records reactions and the command menu; `broken` makes every reaction fail."""

    name: ClassVar[str] = "fake"

    def __init__(self, broken: bool = False) -> None:
        self.broken = broken
        self.reactions: list[tuple[str, str, ReactionStatus]] = []
        self.menus: list[list[CommandSpec]] = []
        self.sent: list[OutboundMessage] = []

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def send(self, message: OutboundMessage) -> None:
        self.sent.append(message)

    async def react(self, chat: ChatRef, message_id: str, status: ReactionStatus) -> None:
        if self.broken:
            raise ConnectionError("reactions are down")
        self.reactions.append((chat.chat_id, message_id, status))

    async def set_commands(self, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
        self.menus.append(list(commands))
        self.privileged = list(privileged)


async def running(channel: ReactingChannel, mode: ReactionMode | None) -> tuple[ChannelManager, LocalBus, EventBus]:
    bus, events = LocalBus(), EventBus()
    retry = RetryPolicy(base_delay=0.01, max_delay=0.02)
    manager = ChannelManager(
        bus, events, start_retry=retry, reactions={"fake": mode}, commands=MENU, menu_users={"fake": ["u1"]}
    )
    manager.add(channel)
    await manager.start()
    await manager.ready("fake")
    return manager, bus, events


def message(chat: ChatRef, platform_id: str, **fields: object) -> InboundMessage:
    return InboundMessage(chat, "u1", "hi", is_direct=chat is DM, platform_message_id=platform_id, **fields)  # type: ignore[arg-type]


async def test_by_default_group_messages_are_marked_seen_and_direct_ones_are_not() -> None:
    channel = ReactingChannel()
    manager, bus, _ = await running(channel, None)
    publish = manager.publisher("fake")
    await publish(message(DM, "1"))
    await publish(message(GROUP, "2"))
    await until(lambda: channel.reactions == [("g1", "2", "seen")], timeout=5)
    served = [await asyncio.wait_for(bus.consume_inbound(), 5) for _ in range(2)]
    await manager.stop()
    assert [m.platform_message_id for m in served] == ["1", "2"]


async def test_status_turns_the_mark_into_done_or_failed_at_the_turn_end() -> None:
    channel = ReactingChannel()
    manager, _, events = await running(channel, "status")
    publish = manager.publisher("fake")
    first, second = message(DM, "10"), message(DM, "11")
    await publish(first)
    events.emit(TurnStarted(DM, first.id))
    await publish(second)  # arrives during the turn: the next turn answers it
    events.emit(TurnFinished(DM, first.id, "answered", 1, 0.1))
    events.emit(Delivered(DM, f"{first.id}:reply", first.id, "reply"))
    events.emit(TurnStarted(DM, second.id))
    events.emit(TurnFinished(DM, second.id, "crashed", 1, 0.1, replied=False))
    expected = [("d1", "10", "seen"), ("d1", "11", "seen"), ("d1", "10", "done"), ("d1", "11", "failed")]
    await until(lambda: channel.reactions == expected, timeout=5)
    await manager.stop()


async def test_a_replying_turn_is_marked_once_its_reply_is_delivered_and_failed_when_it_is_not() -> None:
    channel = ReactingChannel()
    manager, _, events = await running(channel, "status")
    delivered, refused = message(DM, "12"), message(DM, "13")
    for turn in (delivered, refused):
        await manager.publisher("fake")(turn)
        events.emit(TurnStarted(DM, turn.id))
        events.emit(TurnFinished(DM, turn.id, "answered", 1, 0.1))
    events.emit(Delivered(DM, "progress-1", delivered.id, "progress"))  # not the answer: no mark yet
    events.emit(DeliveryFailed(DM, f"{refused.id}:reply", refused.id, "refused"))
    events.emit(Delivered(DM, f"{delivered.id}:reply", delivered.id, "reply"))
    expected = [("d1", "12", "seen"), ("d1", "13", "seen"), ("d1", "13", "failed"), ("d1", "12", "done")]
    await until(lambda: channel.reactions == expected, timeout=5)
    await manager.stop()


async def test_off_presses_and_edits_get_no_reaction() -> None:
    channel = ReactingChannel()
    manager, _, _ = await running(channel, "ack")
    publish = manager.publisher("fake")
    await publish(message(GROUP, "20", press=Press("K7Q", "once")))
    await publish(message(GROUP, "21@2", edit_of="21"))
    await publish(message(GROUP, "22"))
    await until(lambda: channel.reactions == [("g1", "22", "seen")], timeout=5)
    await manager.stop()
    quiet = ReactingChannel()
    manager, _, _ = await running(quiet, "off")
    await manager.publisher("fake")(message(GROUP, "30"))
    await manager.stop()
    assert quiet.reactions == []


async def test_a_failed_reaction_never_stops_the_message_or_the_reply() -> None:
    channel = ReactingChannel(broken=True)
    manager, bus, _ = await running(channel, "ack")
    sent = message(GROUP, "40")
    await manager.publisher("fake")(sent)
    assert (await asyncio.wait_for(bus.consume_inbound(), 5)).id == sent.id
    await bus.publish_outbound(OutboundMessage(GROUP, "answer"))
    await until(lambda: [m.text for m in channel.sent] == ["answer"], timeout=5)
    await manager.stop()


async def test_the_command_menu_is_handed_over_once_the_channel_has_started() -> None:
    channel = ReactingChannel()
    manager, _, _ = await running(channel, None)
    await until(lambda: channel.menus == [list(MENU)], timeout=5)
    assert channel.privileged == ["u1"]  # the channel's owners and admins, whose chats list privileged commands
    await manager.stop()


async def test_marks_waiting_for_a_turn_are_bounded_and_the_least_recent_chats_go_first() -> None:
    from channels.gateway.reactions import Reactions

    channel, spawned = ReactingChannel(), []
    reactions = Reactions({"fake": "status"}, lambda work, name: spawned.append(work), tracked=2)
    other = ChatRef("fake", "g2")
    for chat, platform_id in ((GROUP, "1"), (GROUP, "2"), (other, "3")):
        reactions.accepted(channel, message(chat, platform_id))
    for chat, turn in ((GROUP, "t1"), (other, "t2")):
        reactions.turn_started(TurnStarted(chat, turn))
        reactions.turn_finished(channel, TurnFinished(chat, turn, "ok", 1, 0.1, replied=False))
    for work in spawned:
        await work
    assert [r for r in channel.reactions if r[2] == "done"] == [("g2", "3", "done")]  # g1's two marks were dropped
