"""Who gets an answer, on every platform: the owner in private, strangers only after pairing, groups on a mention
(on the platforms that declare groups: on the others every chat is direct)."""

import re
from pathlib import Path

import pytest

from bot.access.pairing import PairingBook
from tests.channels.contract.gateways import gateway, user_texts
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import GatewayUnderTest
from tests.support.platform import Platform
from tests.support.platforms import platforms_with


async def test_owner_dm_is_answered_by_the_model(bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform) -> None:
    fake_llm.script(Text("Hello, owner."))
    platform.dm("good morning", platform.owner)
    await platform.wait_sent(1)
    assert platform.sent() == ["Hello, owner."]
    assert user_texts(fake_llm)[0].endswith("good morning")


async def test_unknown_sender_gets_only_a_pairing_code_until_approved(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    platform.dm("hello?", platform.stranger)
    await platform.wait_sent(1)
    (first,) = platform.sent()
    code = re.search(r"pairing code is ([A-Z2-9]{8})", first).group(1)
    platform.dm("anyone?", platform.stranger)
    await platform.wait_sent(2)
    assert platform.sent()[1] == first  # the same code again, so nobody is left without one
    platform.dm("barrier", platform.owner)
    await platform.wait_sent(3)
    assert len(fake_llm.requests) == 1 and user_texts(fake_llm)[0].endswith("barrier")
    assert PairingBook(bot.config.state_dir / "pairing.json").approve(platform.name, code) == platform.stranger
    platform.dm("now?", platform.stranger)
    await platform.wait_sent(4)
    assert platform.sent()[3].endswith("now?")


@pytest.mark.parametrize("platform", platforms_with("has_groups"), indirect=True)
async def test_groups_need_a_mention(bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform) -> None:
    platform.group("talking among ourselves", platform.owner, False)
    platform.group("what do you think?", platform.owner, True)
    await platform.wait_sent(1)
    (answer,) = platform.sent()
    assert answer.endswith("what do you think?")
    assert len(fake_llm.requests) == 1


async def test_a_redelivered_message_is_answered_once(
    bot: GatewayUnderTest, fake_llm: FakeLLM, platform: Platform
) -> None:
    first = platform.dm("only once", platform.owner)
    await platform.wait_sent(1)
    platform.redeliver(first)
    platform.dm("next", platform.owner)
    await platform.wait_sent(2)
    assert platform.sent()[1].endswith("next")
    assert len(fake_llm.requests) == 2


@pytest.mark.parametrize("platform", platforms_with("has_groups"), indirect=True)
async def test_a_server_routed_to_a_persona_gets_its_model_and_system_text(
    tmp_path: Path, fake_llm: FakeLLM, platform: Platform
) -> None:
    (tmp_path / "workspace" / "personas").mkdir(parents=True)
    (tmp_path / "workspace" / "personas" / "support.md").write_text("You are the support desk.")
    async with gateway(
        tmp_path,
        fake_llm,
        platform,
        personas={"support": {"model": "openai/support-model", "system": "personas/support.md"}},
        routes=[{"match": f"{platform.name}:server:{platform.server}", "persona": "support"}],
    ) as running:
        await running.gateway.manager.ready(platform.name)
        platform.group("help me", platform.owner, True)
        await platform.wait_sent(1)
        platform.dm("and in private?", platform.owner)
        await platform.wait_sent(2)
    group, direct = fake_llm.requests
    assert group["model"] == "support-model" and "You are the support desk." in group["messages"][0]["content"]
    if platform.name == "slack":  # a Slack DM happens inside the workspace (team), so the team's persona answers
        assert direct["model"] == "support-model"
    else:
        assert direct["model"] == "fake-model" and "support desk" not in direct["messages"][0]["content"]
