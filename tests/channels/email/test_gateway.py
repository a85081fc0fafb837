"""Email in a running gateway against Dovecot and aiosmtpd: the model answers, pairing by reply, redelivery."""

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.access.pairing import PairingBook
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import GatewayUnderTest
from tests.support.mail_servers import DovecotServer, MailPlatform

OWNER, STRANGER = "owner@example.org", "stranger@example.org"


@pytest_asyncio.fixture
async def bot(
    tmp_path: Path, fake_llm: FakeLLM, dovecot_server: DovecotServer
) -> AsyncIterator[tuple[GatewayUnderTest, MailPlatform]]:
    async with MailPlatform(dovecot_server) as servers:
        channels = {"email": {"enabled": True, **servers.section()}}
        async with GatewayUnderTest(tmp_path, fake_llm, [f"email:{OWNER}"], channels) as running:
            await running.gateway.manager.ready("email")
            yield running, servers


async def test_owner_mail_is_answered_in_its_thread(
    bot: tuple[GatewayUnderTest, MailPlatform], fake_llm: FakeLLM
) -> None:
    _, servers = bot
    fake_llm.script(Text("Good morning!"))
    servers.push("good morning", OWNER, subject="Hello")
    (reply,) = await servers.sink.wait_for(1)
    assert servers.texts() == ["Good morning!"] and reply["Subject"] == "Re: Hello" and reply["In-Reply-To"]
    assert fake_llm.requests[0]["messages"][-1]["content"].endswith("good morning")


async def test_stranger_gets_a_pairing_code_by_reply_until_approved(
    bot: tuple[GatewayUnderTest, MailPlatform], fake_llm: FakeLLM
) -> None:
    running, servers = bot
    servers.push("hello?", STRANGER)
    await servers.sink.wait_for(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", servers.texts()[0]).group(1)
    assert fake_llm.requests == []
    assert PairingBook(running.config.state_dir / "pairing.json").approve("email", code) == STRANGER
    servers.push("now?", STRANGER)
    await servers.sink.wait_for(2)
    assert servers.texts()[1].endswith("now?")


async def test_a_mail_delivered_twice_is_answered_once(
    bot: tuple[GatewayUnderTest, MailPlatform], fake_llm: FakeLLM
) -> None:
    _, servers = bot
    first = servers.push("only once", OWNER)
    await servers.sink.wait_for(1)
    servers.redeliver(first)
    servers.push("next", OWNER)
    await servers.sink.wait_for(2)
    assert servers.texts()[1].endswith("next") and len(fake_llm.requests) == 2


async def test_an_allowed_address_is_answered_without_pairing_in_any_case(
    tmp_path: Path, fake_llm: FakeLLM, dovecot_server: DovecotServer
) -> None:
    async with MailPlatform(dovecot_server) as servers:
        section = {"enabled": True, **servers.section(), "allow_from": ["Friend@Example.org"]}
        async with GatewayUnderTest(tmp_path, fake_llm, [f"email:{OWNER}"], {"email": section}) as running:
            await running.gateway.manager.ready("email")
            fake_llm.script(Text("Hello, friend."))
            servers.push("hi there", "Friend <FRIEND@example.org>")
            await servers.sink.wait_for(1)
    assert servers.texts() == ["Hello, friend."] and servers.sink.envelopes[0][1] == ["friend@example.org"]
