"""`relaybot reload` and SIGHUP: live keys apply from the next turn, others are named, an invalid file is refused."""

from __future__ import annotations

import signal
from pathlib import Path

import yaml

from tests.fakes.openai_server import FakeLLM
from tests.fakes.telegram_server import FakeTelegram
from tests.support.cli_process import run_cli
from tests.support.gateway_process import GatewayProcess
from tests.support.polling import until

OWNER = 42
STRANGER = 77


def edit_config(home: Path, change: dict) -> None:
    path = home / "config.yaml"
    data = yaml.safe_load(path.read_text())
    for key, value in change.items():
        data[key] = {**data.get(key, {}), **value} if isinstance(value, dict) else value
    path.write_text(yaml.safe_dump(data))


async def test_reload_applies_live_keys_names_the_rest_and_refuses_an_invalid_file(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    bot = GatewayProcess(tmp_path, fake_llm, telegram, [OWNER])
    await bot.start()
    await until((bot.state / "control.sock").exists, 60, interval=0.05)
    telegram.text("hi", chat_id=STRANGER, user_id=STRANGER)
    await telegram.wait_for_sent(1, timeout=30)
    assert "pairing code" in telegram.sent[-1]["text"]

    section = yaml.safe_load((tmp_path / "config.yaml").read_text())["channels"]["telegram"]
    section.update(allow_from=[str(STRANGER)], dm_policy="allowlist", token="999:OTHER")
    llm = yaml.safe_load((tmp_path / "config.yaml").read_text())["llm"]
    edit_config(tmp_path, {"channels": {"telegram": section}, "llm": {**llm, "model": "openai/other-model"}})
    code, out, err = await run_cli(tmp_path, "reload")
    assert code == 0, err
    assert "channels.telegram.allow_from" in out and "llm.model" in out
    assert "channels.telegram.token changed; it takes effect after a restart." in out

    telegram.text("now?", chat_id=STRANGER, user_id=STRANGER)  # allowed now, answered by the new model
    await telegram.wait_for_sent(2, timeout=30)
    assert telegram.sent[-1]["text"].startswith("echo: ")
    assert fake_llm.requests[-1]["model"] == "other-model"

    edit_config(tmp_path, {"llm": {**llm, "max_tokens": "lots"}})
    code, out, err = await run_cli(tmp_path, "reload")
    assert code == 1 and "llm.max_tokens" in err
    telegram.text("still?", chat_id=STRANGER, user_id=STRANGER)  # the running config is kept
    await telegram.wait_for_sent(3, timeout=30)
    assert fake_llm.requests[-1]["model"] == "other-model"

    edit_config(tmp_path, {"llm": {**llm, "model": "openai/third-model", "max_tokens": 4096}})
    assert bot.process is not None
    bot.process.send_signal(signal.SIGHUP)
    log = bot.state / "logs" / "relaybot.log"
    await until(lambda: log.read_text().count("reload: applied") == 2, 30, interval=0.1)
    telegram.text("and now?", chat_id=OWNER, user_id=OWNER)
    await telegram.wait_for_sent(4, timeout=30)
    assert fake_llm.requests[-1]["model"] == "third-model"
    err = await bot.stop()
    errors = [line for line in log.read_text().splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "llm.max_tokens" in errors[0], errors
