"""WhatsApp in a running gateway: the webhook on the health listener, the model answers, pairing, redelivery, a
flood limited."""

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.access.pairing import PairingBook
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.whatsapp_server import FakeWhatsApp
from tests.support.apps import whatsapp_section
from tests.support.harness import GatewayUnderTest

OWNER, STRANGER = "4915100000042", "4915100000077"


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[tuple[GatewayUnderTest, FakeWhatsApp]]:
    async with FakeWhatsApp() as fake:
        channels = {"whatsapp": {**whatsapp_section(fake), "enabled": True}}
        async with GatewayUnderTest(tmp_path, fake_llm, [f"whatsapp:{OWNER}"], channels, health={"port": 0}) as running:
            assert running.gateway.health_server is not None
            fake.webhook_url = f"http://127.0.0.1:{running.gateway.health_server.port}/whatsapp/webhook"
            await running.gateway.manager.ready("whatsapp")
            yield running, fake


def texts(fake: FakeWhatsApp) -> list[str]:
    return [sent["text"]["body"] for sent in fake.sent]


async def test_owner_message_is_read_and_answered_by_the_model_as_a_quoted_reply(
    bot: tuple[GatewayUnderTest, FakeWhatsApp], fake_llm: FakeLLM
) -> None:
    _, fake = bot
    fake_llm.script(Text("Good morning!"))
    incoming = fake.push_text("good morning", sender=OWNER)
    (sent,) = await fake.wait_for_sent(1)
    assert sent["text"]["body"] == "Good morning!" and sent["context"] == {"message_id": incoming["id"]}
    await fake.wait_for_reads(1)  # the read receipt (blue ticks) went out while the turn ran
    assert fake.reads[0]["message_id"] == incoming["id"]


async def test_stranger_gets_a_pairing_code_until_approved(
    bot: tuple[GatewayUnderTest, FakeWhatsApp], fake_llm: FakeLLM
) -> None:
    running, fake = bot
    fake.push_text("hello?", sender=STRANGER)
    await fake.wait_for_sent(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", texts(fake)[0]).group(1)
    assert fake_llm.requests == []
    assert PairingBook(running.config.state_dir / "pairing.json").approve("whatsapp", code) == STRANGER
    fake.push_text("now?", sender=STRANGER)
    await fake.wait_for_sent(2)
    assert texts(fake)[1].endswith("now?") and len(fake_llm.requests) == 1


async def test_a_redelivered_webhook_is_answered_once(
    bot: tuple[GatewayUnderTest, FakeWhatsApp], fake_llm: FakeLLM
) -> None:
    _, fake = bot
    first = fake.push_text("only once", sender=OWNER)
    await fake.wait_for_sent(1)
    fake.push(fake.message_payload(first))
    fake.push_text("next", sender=OWNER)
    await fake.wait_for_sent(2)
    assert texts(fake)[1].endswith("next") and len(fake_llm.requests) == 2


async def test_a_webhook_flood_from_one_sender_is_limited_like_any_other(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeWhatsApp() as fake:
        section = {**whatsapp_section(fake), "enabled": True, "dm_policy": "open"}
        async with GatewayUnderTest(
            tmp_path,
            fake_llm,
            [f"whatsapp:{OWNER}"],
            {"whatsapp": section},
            health={"port": 0},
            access={"rate_limit": 2},
        ) as running:
            assert running.gateway.health_server is not None
            fake.webhook_url = f"http://127.0.0.1:{running.gateway.health_server.port}/whatsapp/webhook"
            await running.gateway.manager.ready("whatsapp")
            for word in ("one", "two", "three", "four", "five"):
                fake.push_text(word, sender=STRANGER)
            fake.push_text("barrier", sender=OWNER)
            await fake.wait_until(lambda: any(t.endswith("barrier") for t in texts(fake)), "the barrier answered")
    asked = " ".join(str(request["messages"][-1]["content"]) for request in fake_llm.requests)
    assert "one" in asked and "two" in asked and not any(word in asked for word in ("three", "four", "five"))
    assert sum("more than 2 messages a minute" in text for text in texts(fake)) == 1
