"""`relaybot doctor` on the apps whose servers users run: Mattermost's token and callback URL, the signal-cli
daemon and its account."""

from pathlib import Path

from tests.fakes.mattermost_server import FakeMattermost
from tests.fakes.openai_server import FakeLLM
from tests.fakes.signal_daemon import FakeSignalDaemon
from tests.setup.test_doctor import doctor, line, write


def mattermost_config(fake_llm: FakeLLM, url: str, token: str, callback: str = "") -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        f"channels:\n  mattermost: {{enabled: true, url: '{url}', token: '{token}', callback_url: '{callback}'}}\n"
    )


async def test_mattermost_token_accepted_and_callbacks_named(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeMattermost() as fake:
        write(tmp_path, mattermost_config(fake_llm, fake.url, fake.token, "http://relaybot.lan:8080"))
        _, output = await doctor(tmp_path)
    assert line(output, "mattermost token") == "✓ mattermost token: accepted (@relaybot)"
    assert line(output, "mattermost callbacks").startswith("✓ mattermost callbacks: buttons and slash commands call")


async def test_mattermost_refused_token_fails_naming_the_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeMattermost() as fake:
        write(tmp_path, mattermost_config(fake_llm, fake.url, "wrong-token"))
        code, output = await doctor(tmp_path)
    assert code == 1
    assert line(output, "mattermost token") == (
        "✗ mattermost token: rejected by the server: Invalid or expired session, please login again."
        " → put the bot account's access token in channels.mattermost.token"
    )
    assert "wrong-token" not in output


async def test_mattermost_without_a_url_names_the_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    write(tmp_path, mattermost_config(fake_llm, "", "t"))
    code, output = await doctor(tmp_path)
    assert code == 1 and "channels.mattermost.url is empty" in line(output, "mattermost token")


def signal_config(fake_llm: FakeLLM, url: str, account: str) -> str:
    return (
        f"llm:\n  model: openai/fake-model\n  api_base: {fake_llm.base_url}\n"
        f"channels:\n  signal: {{enabled: true, url: '{url}', account: '{account}'}}\n"
    )


async def test_signal_daemon_serving_the_account_is_ok(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeSignalDaemon() as fake:
        write(tmp_path, signal_config(fake_llm, fake.url, fake.account))
        _, output = await doctor(tmp_path)
    assert line(output, "signal daemon") == f"✓ signal daemon: {fake.url} serves {fake.account} (1 groups)"


async def test_signal_wrong_account_and_absent_daemon_fail_naming_the_key(tmp_path: Path, fake_llm: FakeLLM) -> None:
    async with FakeSignalDaemon() as fake:
        write(tmp_path, signal_config(fake_llm, fake.url, "+4915100000000"))
        code, output = await doctor(tmp_path)
        assert code == 1 and "correct channels.signal.account" in line(output, "signal daemon")
        await fake.stop()
        _, output = await doctor(tmp_path)
    assert "not reachable" in line(output, "signal daemon") and "channels.signal.url" in line(output, "signal daemon")
