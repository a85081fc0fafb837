"""Several agents on Mattermost and Signal: bindings take their ids (a Mattermost team, a Signal group), DMs stay
with the default agent."""

from pathlib import Path

import pytest

from tests.channels.contract.gateways import gateway
from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.openai_server import FakeLLM
from tests.fakes.signal_daemon import FakeSignalDaemon
from tests.support.platform import Platform
from tests.support.selfhosted import Mattermost, Signal

WORK = [{"name": "work", "llm": {"model": "openai/work-model"}}]


@pytest.mark.parametrize("face", [Mattermost, Signal])
async def test_a_bound_group_goes_to_its_agent_and_a_dm_to_the_default_one(
    tmp_path: Path, fake_llm: FakeLLM, face: type[Platform]
) -> None:
    fake_class = FakeMattermost if face is Mattermost else FakeSignalDaemon
    async with fake_class() as fake:
        platform = face(fake)
        binding = {"agent": "work", "channel": platform.name, "server": platform.server}
        async with gateway(tmp_path, fake_llm, platform, agents=WORK, bindings=[binding]) as running:
            await running.gateway.manager.ready(platform.name)
            platform.group("the quarterly numbers", platform.owner, True)
            await platform.wait_sent(1)
            platform.dm("my sister's birthday", platform.owner)
            await platform.wait_sent(2)
    group_call, dm_call = fake_llm.requests
    assert group_call["model"] == "work-model" and "quarterly" in str(group_call["messages"])
    assert dm_call["model"] == "fake-model" and "quarterly" not in str(dm_call["messages"])
