"""The IRC channel on a real ngircd: long replies split at the line limit, flood control by the server's pace,
reconnect and rejoin, NickServ identification."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest_asyncio

from bot.bus import ChatRef, OutboundMessage
from bot.retry import RetryPolicy
from channels.irc.channel import IrcChannel
from channels.irc.client import WINDOW_LINES
from tests.support.adapter import AdapterUnderTest
from tests.support.irc_users import IrcUser
from tests.support.irc_world import BOT_NICK, OWNER, IrcWorld
from tests.support.ngircd import ROOM
from tests.support.polling import until

CODE = [f"    total_{i} = compute(values[{i}], weights[{i}])  # step {i}" for i in range(12)]
PROSE = " ".join(f"Sentence number {i} explains one more detail of the computation." for i in range(40))
FAST = RetryPolicy(base_delay=0.01, sleep=lambda seconds: asyncio.sleep(0))


@pytest_asyncio.fixture
async def world() -> AsyncIterator[IrcWorld]:
    async with IrcWorld() as running:
        yield running


def adapter(world: IrcWorld, **keys: object) -> AdapterUnderTest[IrcChannel]:
    config = world.config(**keys)
    return AdapterUnderTest(lambda publish: IrcChannel(publish, config, FAST))


async def test_a_long_reply_is_split_into_lines_within_512_bytes_with_words_and_code_whole(world: IrcWorld) -> None:
    reply = f"{PROSE}\n\n```python\n" + "\n".join(CODE) + f"\n```\n\n{PROSE}"
    async with adapter(world) as bot:
        await bot.channel.send(OutboundMessage(ChatRef("irc", OWNER), reply))
        await bot.channel.send(OutboundMessage(ChatRef("irc", OWNER), "end"))
        owner = world.users[OWNER]
        await until(lambda: owner.texts_from(BOT_NICK)[-1:] == ["end"], 15)
    received = [line for line in owner.received if line.sender == BOT_NICK][:-1]
    assert all(len(line.raw) <= 512 for line in received)
    assert max(len(line.raw) for line in received) > 450  # the budget is used, not a timid guess
    texts = [line.text for line in received]
    assert texts[texts.index(CODE[0]) : texts.index(CODE[0]) + len(CODE)] == CODE
    prose = [text for text in texts if text not in CODE]
    assert " ".join(prose) == f"{PROSE} {PROSE}"  # every word whole, in order


async def test_channel_lines_are_answered_only_when_addressed_and_a_dm_always(world: IrcWorld) -> None:
    async with adapter(world) as bot:
        world.say(OWNER, ROOM, "just chatting")
        world.say(OWNER, ROOM, f"{BOT_NICK}: are you there?")
        world.say(OWNER, BOT_NICK, "a private word")
        chatting, addressed, private = [await bot.next() for _ in range(3)]
    assert not chatting.mentioned and addressed.mentioned and addressed.text == "are you there?"
    assert private.is_direct and private.chat == ChatRef("irc", OWNER)


async def test_a_dropped_connection_is_reconnected_and_the_channels_rejoined(world: IrcWorld) -> None:
    async with adapter(world) as bot:
        world.front.drop()
        await until(lambda: world.front.connections == 2 and bot.channel.connected, 10)
        world.say(OWNER, ROOM, f"{BOT_NICK}: back?")
        message = await bot.next()
        await bot.channel.send(OutboundMessage(message.chat, "back."))
        assert await world.users[OWNER].wait_for(1, BOT_NICK) == ["back."]
    assert message.text == "back?"


async def test_the_bot_identifies_to_nickserv_where_the_server_offers_no_sasl(world: IrcWorld) -> None:
    assert world.server is not None
    async with IrcUser(world.server.port, "NickServ") as nickserv, adapter(world, password="s3cret"):
        texts = await nickserv.wait_for(1, BOT_NICK)
    assert texts == [f"IDENTIFY {BOT_NICK} s3cret"]


async def test_flood_control_keeps_at_most_one_window_unacknowledged_on_a_throttling_server() -> None:
    lines = [f"line {i:02d} " + "x" * 70 for i in range(8)]
    async with IrcWorld(penalties=True, people=(OWNER,)) as world, adapter(world, channels=[]) as bot:
        await bot.channel.send(OutboundMessage(ChatRef("irc", OWNER), "\n\n".join(lines)))
        assert await world.users[OWNER].wait_for(len(lines), BOT_NICK) == lines
    unacknowledged = 0
    for command in world.front.transcript:
        unacknowledged = 0 if command == "PONG" else unacknowledged + (command == "PRIVMSG")
        assert unacknowledged <= WINDOW_LINES
    assert world.front.transcript.count("PONG") >= len(lines) // WINDOW_LINES
