"""The XMPP channel on a real Prosody: one-to-one answers, rooms answered on a mention, live replies corrected in
place (XEP-0308), files over HTTP upload (XEP-0363) or, without it, a notice naming them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot.bus import Attachment, ChatRef, OutboundMessage
from bot.config.channels.xmpp import XmppConfig
from bot.errors import ChannelError, ChannelUnavailable
from bot.events import Delivered
from bot.retry import RetryPolicy
from channels.xmpp.channel import XmppChannel
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.adapter import AdapterUnderTest
from tests.support.harness import GatewayUnderTest, next_event
from tests.support.polling import until
from tests.support.prosody import PASSWORD
from tests.support.xmpp_users import XmppUser
from tests.support.xmpp_world import ROOM, XmppWorld

FAST = RetryPolicy(base_delay=0.05, sleep=lambda seconds: asyncio.sleep(0.05))
REPLY = "Here is the answer you asked for, written slowly so that it streams in many small pieces."


@pytest_asyncio.fixture
async def world() -> AsyncIterator[XmppWorld]:
    async with XmppWorld() as running:
        yield running


def gateway(tmp_path: Path, fake_llm: FakeLLM, world: XmppWorld, **keys: Any) -> GatewayUnderTest:
    assert world.owner is not None
    owners = [f"xmpp:{world.owner.boundjid.bare}"]
    return GatewayUnderTest(tmp_path, fake_llm, owners, {"xmpp": {"enabled": True, **world.section(**keys)}})


def adapter(world: XmppWorld, **keys: Any) -> AdapterUnderTest[XmppChannel]:
    config = XmppConfig.model_validate({"enabled": True, **world.section(**keys)})
    return AdapterUnderTest(lambda publish: XmppChannel(publish, config, FAST))


async def test_a_direct_message_is_answered(tmp_path: Path, fake_llm: FakeLLM, world: XmppWorld) -> None:
    assert world.owner is not None
    fake_llm.script(Text("Hello, owner."))
    async with gateway(tmp_path, fake_llm, world) as bot:
        await bot.gateway.manager.ready("xmpp")
        world.owner.say(world.bot, "good morning")
        (answer,) = await world.owner.wait_for(1, world.bot)
    assert answer.body == "Hello, owner." and answer.kind == "chat"


async def test_in_a_room_only_a_mention_is_answered(tmp_path: Path, fake_llm: FakeLLM, world: XmppWorld) -> None:
    assert world.owner is not None
    async with gateway(tmp_path, fake_llm, world) as bot:
        await bot.gateway.manager.ready("xmpp")
        world.owner.say(ROOM, "talking among ourselves", "groupchat")
        world.owner.say(ROOM, "bot: what do you think?", "groupchat")
        (answer,) = await world.owner.wait_for(1, f"{ROOM}/bot")
    assert answer.body.endswith("\nwhat do you think?") and len(fake_llm.requests) == 1
    assert "talking among ourselves" in answer.body  # the unaddressed line came along only as context


async def test_a_live_reply_is_one_message_corrected_in_place(
    tmp_path: Path, fake_llm: FakeLLM, world: XmppWorld
) -> None:
    assert world.owner is not None
    async with gateway(tmp_path, fake_llm, world, streaming="edit", stream_interval="40ms") as bot:
        await bot.gateway.manager.ready("xmpp")
        fake_llm.script(Text(REPLY, chunk_delay=0.05))
        delivered = asyncio.create_task(next_event(bot.gateway.agent.events, Delivered))
        world.owner.say(world.bot, "explain")
        await delivered
        await world.owner.wait_for(2, world.bot)
    first, *corrections = world.owner.from_(world.bot)
    assert not first.replaces and len(corrections) >= 1
    assert {got.replaces for got in corrections} == {first.message_id}  # each names the original (XEP-0308 §4)
    assert all(REPLY.startswith(got.body) for got in [first, *corrections]) and corrections[-1].body == REPLY


async def test_a_file_goes_over_http_upload_as_a_link(tmp_path: Path, world: XmppWorld) -> None:
    assert world.owner is not None
    report = tmp_path / "report.txt"
    report.write_text("all systems nominal\n")
    async with adapter(world) as bot:
        files = (Attachment(str(report), "text/plain"),)
        await bot.channel.send(OutboundMessage(ChatRef("xmpp", world.owner.boundjid.bare), "the report", files=files))
        text, link = await world.owner.wait_for(2, world.bot)
    assert text.body == "the report" and link.oob_url == link.body and link.body.endswith("/report.txt")
    async with aiohttp.ClientSession() as http, http.get(link.oob_url) as response:
        assert await response.read() == b"all systems nominal\n"


async def test_without_http_upload_a_file_becomes_a_notice_without_a_link(tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    report.write_text("all systems nominal\n")
    async with XmppWorld(upload=False) as world, adapter(world) as bot:
        assert world.owner is not None
        files = (Attachment(str(report), "text/plain"),)
        await bot.channel.send(OutboundMessage(ChatRef("xmpp", world.owner.boundjid.bare), "", files=files))
        (notice,) = await world.owner.wait_for(1, world.bot)
    assert "report.txt" in notice.body and "http" not in notice.body and not notice.oob_url


async def test_a_message_to_a_room_the_bot_is_not_in_is_refused_for_good(world: XmppWorld) -> None:
    async with adapter(world) as bot:
        with pytest.raises(ChannelError) as refused:
            await bot.channel.send(OutboundMessage(ChatRef("xmpp", "elsewhere@rooms.localhost"), "hello?"))
    assert not isinstance(refused.value, ChannelUnavailable) and refused.value.code


async def test_after_the_server_restarts_the_bot_logs_in_again_and_rejoins_its_room(world: XmppWorld) -> None:
    assert world.server is not None and world.owner is not None
    async with adapter(world) as bot:
        await asyncio.to_thread(world.server.restart)
        await until(lambda: bot.channel.connected, 20)
        owner = await XmppUser(world.owner.boundjid.bare, PASSWORD, world.server.port).online()
        try:
            await owner.join(ROOM, "owner")
            owner.say(ROOM, "bot: back?", "groupchat")
            message = await bot.next(timeout=10)
        finally:
            await owner.offline()
    assert message.text == "back?" and message.chat == ChatRef("xmpp", ROOM) and message.mentioned
