"""`relaybot init`: new keys added to an old config, and the questions asked on a terminal."""

import asyncio
import io
import sys
from pathlib import Path

import pexpect
from typer.testing import CliRunner

from bot.cli.main import app
from bot.config.loader import load_config
from bot.setup.home import bundled
from bot.setup.init_wizard import apply_settings, ask_settings
from tests.cli_process import env_for
from tests.fakes.openai_server import FakeLLM

OLD_CONFIG = """\
# my own notes
llm:
  model: openai/my-model   # the one I like
  api_key: sk-mine
agent:
  max_iterations: 7
channels:
  telegram:
    enabled: false
"""


def test_rerunning_init_adds_new_keys_commented_and_keeps_the_users_values(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(OLD_CONFIG)
    runner = CliRunner()
    first = runner.invoke(app, ["init"], env=env_for(tmp_path))
    assert first.exit_code == 0, first.output
    text = config.read_text()
    assert text.startswith(OLD_CONFIG)
    added = text[len(OLD_CONFIG) :]
    assert "#   turn_timeout: 10m" in added and "#     dm_policy: pairing" in added
    assert "# heartbeat:" in added and "#   # Longest one turn may run" in added
    assert "agent.turn_timeout" in first.output and "channels.telegram.dm_policy" in first.output
    listed = next(line for line in first.output.splitlines() if line.startswith("added to"))
    keys = listed.split(": ", 1)[1].split(", ")
    assert "agent.max_iterations" not in keys and "llm.model" not in keys and "llm.models" in keys
    loaded = load_config(config)
    assert (loaded.llm.model, loaded.agent.max_iterations) == ("openai/my-model", 7)
    second = runner.invoke(app, ["init"], env=env_for(tmp_path))
    assert "added to" not in second.output and config.read_text() == text


def test_answers_are_written_into_the_example_with_its_comments() -> None:
    answers = iter(["ollama/llama3", "http://127.0.0.1:11434/v1", "", 'tok"en:1'])
    settings = ask_settings(lambda q, d, h: next(answers), lambda q: q == "Enable telegram?")
    text = apply_settings(bundled("config.example.yaml").read_text(), settings)
    assert "  # Bot token from @BotFather.\n    token: " in text
    import yaml

    data = yaml.safe_load(text)
    assert data["llm"]["model"] == "ollama/llama3" and data["llm"]["api_base"] == "http://127.0.0.1:11434/v1"
    assert data["llm"]["api_key"] == ""  # no variable: a key in the shell must not reach the server
    assert data["channels"]["telegram"] == {**data["channels"]["telegram"], "enabled": True, "token": 'tok"en:1'}
    assert data["channels"]["discord"]["enabled"] is False


def answer_init(home: Path, base_url: str, transcript: io.StringIO) -> int:
    env = {**env_for(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, ["-m", "bot", "init"], env=env, encoding="utf-8", timeout=60)
    child.logfile_read = transcript
    child.expect_exact("Model")
    child.sendline("openai/fake-model")
    child.expect_exact("Server URL")
    child.sendline(base_url)
    child.expect_exact("API key")
    child.sendline("")
    for name in ("telegram", "discord", "slack"):
        child.expect_exact(f"Enable {name}?")
        child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


async def test_init_on_a_terminal_asks_then_runs_the_checks(tmp_path: Path, fake_llm: FakeLLM) -> None:
    transcript = io.StringIO()
    status = await asyncio.wait_for(asyncio.to_thread(answer_init, tmp_path, fake_llm.base_url, transcript), 90)
    output = transcript.getvalue()
    assert status == 0, output
    config = load_config(tmp_path / "config.yaml")
    assert config.llm.model == "openai/fake-model" and config.llm.api_base == fake_llm.base_url
    assert "✓ model: openai/fake-model" in output and "✓ workspace" in output


def test_non_interactive_init_asks_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init", "--non-interactive"], env=env_for(tmp_path))
    assert result.exit_code == 0 and "Model" not in result.output
    assert load_config(tmp_path / "config.yaml").llm.model == "openai/gpt-4o-mini"
