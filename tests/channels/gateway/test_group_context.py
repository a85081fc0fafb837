"""The group buffer, alone and behind the manager's publish: overheard lines come with the next mention."""

from pathlib import Path
from typing import Any

from bot.access.activation import Activations
from bot.access.pairing import PairingBook
from bot.access.policy import AccessPolicy
from bot.agent.commands.activation import ActivationCommand
from bot.bus import ChatRef, GroupLine, InboundMessage, LocalBus, Trust
from bot.chats.rules import ChatRulesBook
from bot.chats.settings import LocalChatSettings
from bot.config.channels.telegram import TelegramConfig
from channels.gateway.group_context import GroupContext
from channels.gateway.manager import ChannelManager


def line(text: str, sender: str = "5") -> GroupLine:
    return GroupLine(sender, "Ann", text, 1.0, Trust.USER)


def in_group(text: str, sender: str = "5", thread: str | None = None, **fields: Any) -> InboundMessage:
    return InboundMessage(ChatRef("telegram", "-100", thread), sender_id=sender, text=text, is_direct=False, **fields)


KEY = "telegram:-100"


def test_the_buffer_keeps_the_last_lines_within_the_character_bound() -> None:
    buffer = GroupContext()
    heard = in_group("")
    for index in range(5):
        buffer.keep(heard, line(f"message {index}"), limit=3, chars=1000)
    assert [kept.text for kept in buffer.lines(KEY)] == ["message 2", "message 3", "message 4"]
    buffer.keep(heard, line("x" * 15), limit=3, chars=20)
    assert [kept.text for kept in buffer.lines(KEY)] == ["x" * 15]
    buffer.keep(heard, line("y" * 50), limit=3, chars=20)
    assert [kept.text for kept in buffer.lines(KEY)] == ["y" * 20]


def test_the_buffer_forgets_the_least_recent_chats_past_its_cap() -> None:
    buffer = GroupContext(max_chats=2)
    for chat in ("a", "b", "c"):
        heard = InboundMessage(ChatRef("telegram", chat), sender_id="5", text=chat, is_direct=False)
        buffer.keep(heard, line(chat), limit=5, chars=100)
    assert (buffer.lines("telegram:a"), len(buffer.lines("telegram:c"))) == ((), 1)


def test_top_level_messages_that_open_their_own_thread_share_the_chats_buffer() -> None:
    buffer = GroupContext()
    for ts in ("1.1", "1.2"):
        heard = InboundMessage(ChatRef("slack", "C1", ts), "U5", "x", is_direct=False, platform_message_id=f"C1:{ts}")
        buffer.keep(heard, line(f"top {ts}"), limit=5, chars=100)
    in_thread = InboundMessage(ChatRef("slack", "C1", "1.1"), "U5", "y", is_direct=False, platform_message_id="C1:1.5")
    buffer.keep(in_thread, line("reply in thread 1.1"), limit=5, chars=100)
    mention = InboundMessage(ChatRef("slack", "C1", "1.9"), "U1", "hey", is_direct=False, platform_message_id="C1:1.9")
    assert [kept.text for kept in buffer.served(mention).context] == ["top 1.1", "top 1.2"]
    assert [kept.text for kept in buffer.lines("slack:C1:1.1")] == ["reply in thread 1.1"]


def test_a_mention_takes_the_buffer_and_new_clears_it() -> None:
    buffer = GroupContext()
    buffer.keep(in_group(""), line("first"), limit=5, chars=100)
    status = buffer.served(in_group("/status", mentioned=True))
    assert status.context == ()
    served = buffer.served(in_group("what do you think?", mentioned=True))
    assert [kept.text for kept in served.context] == ["first"]
    assert buffer.lines("telegram:-100") == ()
    buffer.keep(in_group(""), line("second"), limit=5, chars=100)
    assert buffer.served(in_group("/new@relaybot")).context == ()
    assert buffer.lines("telegram:-100") == ()


def manager(tmp_path: Path, **section: Any) -> tuple[ChannelManager, LocalBus]:
    config = TelegramConfig.model_validate({"allow_from": ["5", "6"], **section})
    activations = Activations(LocalChatSettings(tmp_path / "settings.db"))
    policy = AccessPolicy(
        "telegram",
        ["telegram:1"],
        config,
        PairingBook(tmp_path / "pairing.json"),
        rules=ChatRulesBook({"telegram": config}),
        activations=activations,
        gate_commands=ActivationCommand(activations),
    )
    bus = LocalBus()
    return ChannelManager(bus, access={"telegram": policy}), bus


async def test_a_mention_brings_what_was_said_since_in_that_topic_only(tmp_path: Path) -> None:
    chats, bus = manager(tmp_path)
    publish = chats.publisher("telegram")
    await publish(in_group("the build is red", sender_name="Ann"))
    await publish(in_group("since the merge", sender="6", sender_name="Bob"))
    await publish(in_group("other topic", thread="9"))
    await publish(in_group("stranger talk", sender="77"))
    await publish(in_group("@relaybot why?", sender="1", mentioned=True))
    served = await bus.consume_inbound()
    assert [(kept.sender_name, kept.text, kept.trust) for kept in served.context] == [
        ("Ann", "the build is red", Trust.USER),
        ("Bob", "since the merge", Trust.USER),
    ]
    assert served.trust is Trust.OWNER
    await publish(in_group("@relaybot again", sender="1", mentioned=True))
    assert (await bus.consume_inbound()).context == ()


async def test_new_in_a_group_clears_what_was_overheard(tmp_path: Path) -> None:
    chats, bus = manager(tmp_path)
    publish = chats.publisher("telegram")
    await publish(in_group("old news"))
    await publish(in_group("/new", sender="1", mentioned=True))
    await bus.consume_inbound()
    await publish(in_group("@relaybot hi", sender="1", mentioned=True))
    assert (await bus.consume_inbound()).context == ()


async def test_activation_is_answered_by_the_gateway_without_the_model(tmp_path: Path) -> None:
    chats, bus = manager(tmp_path)
    await chats.publisher("telegram")(in_group("/activation always", sender="1", platform_message_id="41"))
    reply = await bus.consume_outbound()
    assert reply.text == "I answer every message here." and reply.reply_to_platform_id == "41"
    await chats.publisher("telegram")(in_group("anyone there?"))
    assert (await bus.consume_inbound()).text == "anyone there?"


def test_lines_the_platform_already_brought_as_context_are_not_added_twice() -> None:
    buffer = GroupContext()
    heard = in_group("", thread="7")
    buffer.keep(heard, GroupLine("5", "Ann", "the tests are green", 20.0, Trust.USER), limit=5, chars=100)
    buffer.keep(heard, GroupLine("6", "Bo", "heard live only", 30.0, Trust.USER), limit=5, chars=100)
    read = (GroupLine("4", "Cy", "from the thread", 5.0), GroupLine("5", "Ann", "the tests are green", 10.0))
    served = buffer.served(in_group("what now?", thread="7", context=read))
    assert [kept.text for kept in served.context] == ["from the thread", "the tests are green", "heard live only"]
