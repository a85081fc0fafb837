"""Teams in a running gateway: the Connector's JWT checked before anything reaches the model, personal chats and
channel mentions answered, files offered with the consent card and uploaded on Allow."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from bot.bus import Attachment, ChatRef, OutboundMessage
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.teams_issuer import FakeIssuer
from tests.fakes.teams_server import APP_ID, FakeTeams
from tests.support.harness import GatewayUnderTest
from tests.support.platform_teams import WEBHOOK_PATH, teams_section

OWNER = "29:owner-0042"


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[tuple[GatewayUnderTest, FakeTeams]]:
    async with FakeTeams() as fake:
        channels = {"teams": {**teams_section(fake), "enabled": True}}
        async with GatewayUnderTest(tmp_path, fake_llm, [f"teams:{OWNER}"], channels, health={"port": 0}) as running:
            assert running.gateway.health_server is not None
            fake.webhook_url = f"http://127.0.0.1:{running.gateway.health_server.port}{WEBHOOK_PATH}"
            await running.gateway.manager.ready("teams")
            yield running, fake


async def test_activities_without_a_valid_token_get_401_and_never_reach_the_model(
    bot: tuple[GatewayUnderTest, FakeTeams], fake_llm: FakeLLM
) -> None:
    _, fake = bot
    conversation = {"id": f"a:personal-{OWNER}", "conversationType": "personal"}
    activity = fake.activity(conversation, OWNER, "run rm -rf for me")
    stranger_key = FakeIssuer(APP_ID, "x", key_number=1).sign(
        fake.service_url
    )  # the right claims, signed by another key
    refused = [
        await fake.deliver(activity, token=None),
        await fake.deliver(activity, token="not.a.jwt"),
        await fake.deliver(activity, token=fake.issuer.sign(fake.service_url, aud="someone-else")),
        await fake.deliver(activity, token=fake.issuer.sign(fake.service_url, exp=1_000_000)),
        await fake.deliver(activity, token=fake.issuer.sign("https://evil.example/")),
        await fake.deliver(activity, token=stranger_key),
    ]
    assert refused == [401] * 6
    fake_llm.script(Text("Hello!"))
    assert await fake.deliver(activity) == 200
    await fake.wait_for_sent(1)
    assert len(fake_llm.requests) == 1 and fake.sent[0]["text"] == "Hello!"


async def test_personal_chat_and_channel_mention_are_answered_in_their_conversations(
    bot: tuple[GatewayUnderTest, FakeTeams], fake_llm: FakeLLM
) -> None:
    _, fake = bot
    fake_llm.script(Text("In private."), Text("In the channel."))
    fake.personal("hi", OWNER)
    await fake.wait_for_sent(1)
    fake.channel_message("not for you", OWNER, mention=False)
    fake.channel_message("what's up?", OWNER, mention=True)
    await fake.wait_for_sent(2)
    assert [(s["_conversation"], s["text"]) for s in fake.sent] == [
        (f"a:personal-{OWNER}", "In private."),
        ("19:general@thread.tacv2", "In the channel."),
    ]
    assert fake_llm.requests[-1]["messages"][-1]["content"].endswith("what's up?")


async def test_a_file_goes_through_the_consent_card_then_shows_as_a_file_card(
    bot: tuple[GatewayUnderTest, FakeTeams], tmp_path: Path
) -> None:
    running, fake = bot
    report = tmp_path / "report.csv"
    report.write_bytes(b"day,answers\nmon,42\n")
    chat = ChatRef("teams", f"a:personal-{OWNER}")
    await running.gateway.agent.bus.publish_outbound(
        OutboundMessage(chat, "", files=(Attachment(str(report), "text/csv"),))
    )
    await fake.wait_for_sent(2)
    consent, info = (sent["attachments"][0] for sent in fake.sent)
    assert consent["contentType"] == "application/vnd.microsoft.teams.card.file.consent"
    assert consent["content"]["sizeInBytes"] == len(report.read_bytes())
    await fake.wait_until(lambda: fake.answers == [200], "the consent invoke answered 200")
    assert fake.uploads == [("report.csv", report.read_bytes())]
    assert info["contentType"] == "application/vnd.microsoft.teams.card.file.info" and info["name"] == "report.csv"
