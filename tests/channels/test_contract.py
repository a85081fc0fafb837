"""What every channel does the same way, checked against each fake platform."""

import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.access.pairing import PairingBook
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_html import html_visible_text
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.whatsapp_server import FakeWhatsApp
from tests.harness import GatewayUnderTest
from tests.mail_servers import MailPlatform


@dataclass
class Platform:
    """One fake platform behind a common face: who is who, how users write, what the bot sent."""

    name: str
    fake: Any
    owner: str
    stranger: str
    limit: int
    server: str
    section: dict[str, Any]
    dm: Callable[[str, str], Any]
    group: Callable[[str, str, bool], Any]
    redeliver: Callable[[Any], None]
    sent: Callable[[], list[str]]
    wait_sent: Callable[[int], Any]
    groups: bool = True  # the platform has group chats
    splits: bool = True  # a long reply is several messages (mail has no length limit)
    overrides: dict[str, Any] = field(default_factory=dict)  # other top-level config sections it needs
    serving: Callable[[GatewayUnderTest], None] = lambda running: None  # told once the gateway is up

    def needs_groups(self) -> None:
        """Skip the calling test on a platform without group chats."""
        if not self.groups:
            pytest.skip(f"{self.name} has no group chats")

    def needs_a_length_limit(self) -> None:
        """Skip the calling test on a platform that sends a reply whole, however long."""
        if not self.splits:
            pytest.skip(f"{self.name} sends a long reply as one message")

    async def texts(self, n: int) -> list[str]:
        """The first `n` texts the bot sent, once it has sent that many."""
        await self.wait_sent(n)
        return self.sent()[:n]


def telegram(fake: FakeTelegram) -> Platform:
    return Platform(
        "telegram",
        fake,
        "42",
        "77",
        4096,
        "-100",
        {"token": fake.token, "api_base": fake.base_url},
        dm=lambda text, user: fake.text(text, chat_id=int(user), user_id=int(user)),
        group=lambda text, user, mention: fake.text(
            f"@{fake.bot_username} {text}" if mention else text, chat_id=-100, user_id=int(user), chat_type="supergroup"
        ),
        redeliver=lambda update: fake.push({"message": update["message"]}),
        sent=lambda: [s["text"] for s in fake.sent],
        wait_sent=fake.wait_for_sent,
    )


def discord(fake: FakeDiscord) -> Platform:
    return Platform(
        "discord",
        fake,
        "42",
        "77",
        2000,
        str(fake.guild_id),
        {"token": fake.token, "api_base": fake.api_base, "gateway_url": fake.gateway_url},
        dm=lambda text, user: fake.dm(text, user_id=int(user)),
        group=lambda text, user, mention: fake.guild_message(text, user_id=int(user), mention_bot=mention),
        redeliver=fake.redeliver,
        sent=lambda: [s["content"] for s in fake.sent],
        wait_sent=fake.wait_for_sent,
    )


def slack(fake: FakeSlack) -> Platform:
    return Platform(
        "slack",
        fake,
        "U0OWNER",
        "U0STRANGER",
        3900,
        fake.team_id,
        # Final messages only: Slack's live replies (a stream API) are covered in test_slack_streaming.
        {"bot_token": fake.bot_token, "app_token": fake.app_token, "api_base": fake.base_url, "streaming": "off"},
        dm=lambda text, user: fake.dm(text, user=user, channel=f"D{user}"),
        group=lambda text, user, mention: fake.channel_message(text, user=user, mention=mention),
        redeliver=fake.redeliver,
        sent=lambda: [s["text"] for s in fake.posted],
        wait_sent=fake.wait_for_posted,
    )


def whatsapp(fake: FakeWhatsApp) -> Platform:
    def serving(running: GatewayUnderTest) -> None:
        assert running.gateway.health_server is not None
        fake.webhook_url = f"http://127.0.0.1:{running.gateway.health_server.port}/whatsapp/webhook"

    return Platform(
        "whatsapp",
        fake,
        "4915100000042",
        "4915100000077",
        4096,
        "",
        {
            "phone_number_id": fake.phone_number_id,
            "access_token": fake.token,
            "app_secret": fake.app_secret,
            "verify_token": "verify",
            "api_base": fake.api_base,
        },
        dm=lambda text, user: fake.push_text(text, sender=user),
        group=lambda text, user, mention: None,
        redeliver=lambda message: fake.push(fake.message_payload(message)),
        sent=lambda: [s["text"]["body"] for s in fake.sent],
        wait_sent=fake.wait_for_sent,
        groups=False,
        overrides={"health": {"port": 0}},
        serving=serving,
    )


def email(servers: MailPlatform) -> Platform:
    return Platform(
        "email",
        servers,
        "owner@example.org",
        "stranger@example.org",
        0,
        "",
        servers.section(),
        dm=lambda text, user: servers.push(text, user),
        group=lambda text, user, mention: None,
        redeliver=servers.redeliver,
        sent=servers.texts,
        wait_sent=servers.sink.wait_for,
        groups=False,
        splits=False,
    )


FAKES = {
    "telegram": (FakeTelegram, telegram),
    "discord": (FakeDiscord, discord),
    "slack": (FakeSlack, slack),
    "whatsapp": (FakeWhatsApp, whatsapp),
    "email": (MailPlatform, email),
}


@pytest_asyncio.fixture(params=sorted(FAKES))
async def platform(request: pytest.FixtureRequest) -> AsyncIterator[Platform]:
    fake_class, face = FAKES[request.param]
    async with fake_class() as fake:
        yield face(fake)


@pytest_asyncio.fixture
async def bot(tmp_path: Path, fake_llm: FakeLLM, platform: Platform) -> AsyncIterator[GatewayUnderTest]:
    section = {"enabled": True, **platform.section}
    owners = [f"{platform.name}:{platform.owner}"]
    async with GatewayUnderTest(tmp_path, fake_llm, owners, {platform.name: section}, **platform.overrides) as running:
        platform.serving(running)
        await running.gateway.manager.ready(platform.name)
        yield running


def user_texts(fake_llm: FakeLLM) -> list[str]:
    texts = []
    for request in fake_llm.requests:
        content = request["messages"][-1]["content"]
        texts.append(content if isinstance(content, str) else content[0]["text"])
    return texts


async def test_owner_dm_is_answered_by_the_model(bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform) -> None:
    fake_llm.script(Text("Hello, owner."))
    platform.dm("good morning", platform.owner)
    assert await platform.texts(1) == ["Hello, owner."]
    assert user_texts(fake_llm)[0].endswith("good morning")


async def test_unknown_sender_gets_only_a_pairing_code_until_approved(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.dm("hello?", platform.stranger)
    (first,) = await platform.texts(1)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", first).group(1)
    platform.dm("anyone?", platform.stranger)
    assert (await platform.texts(2))[1] == first  # the same code again, so nobody is left without one
    platform.dm("barrier", platform.owner)
    await platform.texts(3)
    assert len(fake_llm.requests) == 1 and user_texts(fake_llm)[0].endswith("barrier")
    assert PairingBook(bot.config.state_dir / "pairing.json").approve(platform.name, code) == platform.stranger
    platform.dm("now?", platform.stranger)
    assert (await platform.texts(4))[3].endswith("now?")


async def test_groups_need_a_mention(bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform) -> None:
    platform.needs_groups()
    platform.group("talking among ourselves", platform.owner, False)
    platform.group("what do you think?", platform.owner, True)
    (answer,) = await platform.texts(1)
    assert answer.endswith("what do you think?")
    assert len(fake_llm.requests) == 1


async def test_long_reply_is_split_within_the_limit_with_code_intact(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.needs_a_length_limit()
    code = "```python\n" + "\n".join(f"value_{i} = {i}" for i in range(150)) + "\n```"
    prose = "\n\n".join(("A sentence about the code. " * 10).strip() for _ in range(8))
    fake_llm.script(Text(prose + "\n\n" + code + "\n\n" + prose))
    platform.dm("explain", platform.owner)
    await platform.texts(2)
    platform.dm("barrier", platform.owner)
    count = 2
    while not platform.sent()[-1].endswith("barrier"):
        count += 1
        await platform.texts(count)
    texts = platform.sent()[:-1]
    assert len(texts) >= 2
    visible = html_visible_text if platform.name == "telegram" else str
    assert all(len(visible(t)) <= platform.limit for t in texts)
    fences = ("<pre>", "</pre>") if platform.name == "telegram" else ("```", "```")
    for text in texts:
        if fences[0] == fences[1]:
            assert text.count(fences[0]) % 2 == 0
        else:
            assert text.count(fences[0]) == text.count(fences[1])


async def test_a_redelivered_message_is_answered_once(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    first = platform.dm("only once", platform.owner)
    await platform.texts(1)
    platform.redeliver(first)
    platform.dm("next", platform.owner)
    texts = await platform.texts(2)
    assert texts[1].endswith("next")
    assert len(fake_llm.requests) == 2


async def test_a_server_routed_to_a_persona_gets_its_model_and_system_text(
    tmp_path: Path, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.needs_groups()
    (tmp_path / "workspace" / "personas").mkdir(parents=True)
    (tmp_path / "workspace" / "personas" / "support.md").write_text("You are the support desk.")
    section = {"enabled": True, **platform.section}
    async with GatewayUnderTest(
        tmp_path,
        fake_llm,
        [f"{platform.name}:{platform.owner}"],
        {platform.name: section},
        personas={"support": {"model": "openai/support-model", "system": "personas/support.md"}},
        routes=[{"match": f"{platform.name}:server:{platform.server}", "persona": "support"}],
        **platform.overrides,
    ) as running:
        platform.serving(running)
        await running.gateway.manager.ready(platform.name)
        platform.group("help me", platform.owner, True)
        await platform.texts(1)
        platform.dm("and in private?", platform.owner)
        await platform.texts(2)
    group, direct = fake_llm.requests
    assert group["model"] == "support-model" and "You are the support desk." in group["messages"][0]["content"]
    if platform.name == "slack":  # a Slack DM happens inside the workspace (team), so the team's persona answers
        assert direct["model"] == "support-model"
    else:
        assert direct["model"] == "fake-model" and "support desk" not in direct["messages"][0]["content"]
