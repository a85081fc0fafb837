"""Mattermost through the whole gateway: a thread is its own conversation, and a slash command is answered."""

import socket
from pathlib import Path

from tests.channels.contract.gateways import gateway
from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.openai_server import FakeLLM, Text
from tests.support.selfhosted import Mattermost, posted_post


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_mention_is_answered_in_a_thread_that_is_its_own_conversation(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    async with FakeMattermost() as fake:
        platform = Mattermost(fake)
        async with gateway(tmp_path, fake_llm, platform) as running:
            await running.gateway.manager.ready("mattermost")
            fake_llm.script(Text("Friday it is."), Text("More in the thread."), Text("Another topic."))
            root = posted_post(fake.channel_message("the plan for friday", platform.owner, mention=True))
            await fake.wait_for_sent(1)
            fake.channel_message("tell me more", platform.owner, mention=False, root_id=root["id"])
            await fake.wait_for_sent(2)
            fake.channel_message("something else", platform.owner, mention=True)
            await fake.wait_for_sent(3)
    assert [post["root_id"] for post in fake.sent[:2]] == [root["id"], root["id"]]
    assert fake.sent[2]["root_id"] not in ("", root["id"])
    in_thread, elsewhere = fake_llm.requests[1]["messages"], fake_llm.requests[2]["messages"]
    assert any("the plan for friday" in str(m.get("content")) for m in in_thread[1:-1])
    assert not any("the plan for friday" in str(m.get("content")) for m in elsewhere[1:-1])


async def test_a_slash_command_is_answered_in_its_channel(tmp_path: Path, fake_llm: FakeLLM) -> None:
    port = free_port()
    async with FakeMattermost() as fake:
        platform = Mattermost(fake)
        section = {"callback_url": f"http://127.0.0.1:{port}"}
        async with gateway(tmp_path, fake_llm, platform, section, health={"port": port}) as running:
            await running.gateway.manager.ready("mattermost")
            triggers = fake.commands.values
            await fake.wait_until(lambda: any(c["trigger"] == "relaybot-help" for c in triggers()), "/relaybot-help")
            assert await fake.slash("relaybot-help", "", platform.owner) == 200
            await fake.wait_for_sent(1)
    assert fake.sent[0]["channel_id"] == fake.dm_channel(platform.owner)
    assert "/new" in fake.sent[0]["message"] and fake_llm.requests == []
