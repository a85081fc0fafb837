"""Signal through the whole gateway: a daemon that is down is retried while the other apps carry on."""

from pathlib import Path

from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.openai_server import FakeLLM, Text
from tests.fakes.signal_daemon import FakeSignalDaemon
from tests.support.harness import GatewayUnderTest
from tests.support.polling import until
from tests.support.selfhosted import Mattermost, Signal


async def test_a_daemon_that_is_down_is_retried_while_mattermost_answers(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeSignalDaemon() as daemon, FakeMattermost() as mattermost:
        await daemon.stop()  # signal-cli is not running yet
        signal, chat = Signal(daemon), Mattermost(mattermost)
        owners = [f"signal:{signal.owner}", f"mattermost:{chat.owner}"]
        channels = {
            "signal": {"enabled": True, **signal.section},
            "mattermost": {"enabled": True, **chat.section},
        }
        async with GatewayUnderTest(tmp_path, fake_llm, owners, channels) as running:
            fake_llm.script(Text("From Mattermost."), Text("From Signal."))
            await running.gateway.manager.ready("mattermost")
            mattermost.dm("anyone?", chat.owner)
            await mattermost.wait_for_sent(1)
            await until(lambda: running.gateway.manager.health()["signal"].state == "failed", 5)
            await daemon.start(daemon.port)  # the user starts signal-cli
            await running.gateway.manager.ready("signal")
            daemon.dm("and here?", signal.owner)
            await daemon.wait_for_sent(1)
    assert mattermost.sent_texts() == ["From Mattermost."] and daemon.sent_texts() == ["From Signal."]
