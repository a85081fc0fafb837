"""`relaybot init`: new keys added to an old config, and the questions asked on a terminal."""

import asyncio
import io
import sys
from pathlib import Path

import pexpect
from typer.testing import CliRunner

from bot.cli.main import app
from bot.config.loader import load_config
from bot.config.schema import Config
from bot.setup.check import Check
from bot.setup.home import bundled
from bot.setup.init_wizard import apply_settings, ask_settings, next_step
from bot.setup.model_check import check_model
from channels.platforms import KINDS
from tests.fakes.openai_server import Error, FakeLLM
from tests.support.cli_process import env_for, run_cli, write_config

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
    questions = {name: kind.asks for name, kind in KINDS.items()}
    settings = ask_settings(lambda q, d, h: next(answers), lambda q: q == "Enable telegram?", questions)
    text = apply_settings(bundled("config.example.yaml").read_text(), settings)
    assert "  # Bot token from @BotFather.\n    token: " in text
    import yaml

    data = yaml.safe_load(text)
    assert data["llm"]["model"] == "ollama/llama3" and data["llm"]["api_base"] == "http://127.0.0.1:11434/v1"
    assert data["llm"]["api_key"] == ""  # no variable: a key in the shell must not reach the server
    assert data["channels"]["telegram"] == {**data["channels"]["telegram"], "enabled": True, "token": 'tok"en:1'}
    assert data["channels"]["discord"]["enabled"] is False and data["channels"]["api"]["enabled"] is False


def test_irc_asks_for_its_server_and_nick_in_the_open_and_its_password_hidden() -> None:
    asked: list[tuple[str, bool]] = []
    answers = iter(["", "", "", "irc.libera.chat", "mybot", "pw"])

    def ask(question: str, default: str, hidden: bool) -> str:
        asked.append((question, hidden))
        return next(answers)

    settings = ask_settings(ask, lambda q: q == "Enable irc?", {name: kind.asks for name, kind in KINDS.items()})
    import yaml

    data = yaml.safe_load(apply_settings(bundled("config.example.yaml").read_text(), settings))
    assert data["channels"]["irc"] == {
        **data["channels"]["irc"],
        "enabled": True,
        "server": "irc.libera.chat",
        "nick": "mybot",
        "password": "pw",
    }
    assert [hidden for _, hidden in asked[3:]] == [False, False, True]


def test_mattermost_asks_for_its_server_in_the_open_and_its_token_hidden() -> None:
    asked: list[tuple[str, bool]] = []
    answers = iter(["openai/m", "", "", "https://chat.example.org", "tok"])

    def ask(question: str, default: str, hidden: bool) -> str:
        asked.append((question, hidden))
        return next(answers)

    questions = {name: kind.asks for name, kind in KINDS.items()}
    settings = ask_settings(ask, lambda q: q == "Enable mattermost?", questions)
    assert [hidden for question, hidden in asked if "Mattermost" in question] == [False, True]
    assert settings[("channels", "mattermost", "url")] == '"https://chat.example.org"'
    assert settings[("channels", "mattermost", "token")] == '"tok"'


def answer_init(home: Path, base_url: str, transcript: io.StringIO, env_key: str = "") -> int:
    env = {**env_for(home), "PROMPT_TOOLKIT_NO_CPR": "1", "TERM": "xterm", "OPENAI_API_KEY": env_key}
    child = pexpect.spawn(sys.executable, ["-m", "bot", "init"], env=env, encoding="utf-8", timeout=60)
    child.logfile_read = transcript
    child.expect_exact("Model")
    child.sendline("openai/fake-model")
    child.expect_exact("Server URL")
    child.sendline(base_url)
    child.expect_exact("API key")
    child.sendline("")
    for name in [name for name, kind in KINDS.items() if kind.asks]:
        child.expect_exact(f"Enable {name}?")
        child.sendline("n")
    child.expect_exact("Enable the web chat")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus


async def test_init_on_a_terminal_asks_then_runs_the_checks(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.models_status = 404  # a chat-only server: init still passes, and says the window is unknown
    transcript = io.StringIO()
    run = asyncio.to_thread(answer_init, tmp_path, fake_llm.base_url, transcript, "sk-in-the-shell")
    status = await asyncio.wait_for(run, 90)
    output = transcript.getvalue()
    assert status == 0, output
    config = load_config(tmp_path / "config.yaml")
    assert config.llm.model == "openai/fake-model" and config.llm.api_base == fake_llm.base_url
    assert config.channels.api.enabled
    assert "✓ model: openai/fake-model" in output and "✓ workspace" in output
    assert "⚠ context window: unknown" in output and "llm.context_window" in output
    assert "Web chat: http://127.0.0.1:18790/" in output and "login form" in output
    assert "Next: talk to the bot with `relaybot chat`" in output
    assert {auth for _, auth in fake_llm.authorizations} == {None}  # the shell's key stayed home


async def checked(home: Path, fake: FakeLLM, model: str = "openai/fake-model", key: str = "") -> Check:
    """The model check init runs, for a config with this server, model and key."""
    llm = {"model": model, "api_base": fake.base_url, "api_key": key}
    return await check_model(Config.model_validate({"workspace": home, "state_dir": home, "llm": llm}))


async def test_init_names_the_next_step_for_the_failure_at_hand(tmp_path: Path, fake_llm: FakeLLM) -> None:
    file = tmp_path / "config.yaml"
    fine = await checked(tmp_path, fake_llm)
    assert next_step(file, [fine]).startswith("Next: talk to the bot with `relaybot chat`")
    async with FakeLLM() as gone:
        pass  # stopped: nothing listens at its address any more
    unreachable = await checked(tmp_path, gone)
    assert next_step(file, [fine, unreachable]).startswith(
        "Next (model): start the model server, or correct llm.api_base.\nThe config is "
    )
    fake_llm.script(Error(404))
    unknown = await checked(tmp_path, fake_llm, "openai/no-such-model")
    assert next_step(file, [unknown]).startswith("Next (model): check llm.model: the server does not know that model.")
    fake_llm.required_key = "sk-right"
    assert next_step(file, [await checked(tmp_path, fake_llm)]).startswith(
        "Next (model): the server wants a key: set llm.api_key."
    )
    refused = await checked(tmp_path, fake_llm, key="sk-wrong")
    assert next_step(file, [refused]).startswith("Next (model): set llm.api_key to a key the server accepts.")
    assert next_step(file, None).startswith("Next: check llm.model (and llm.api_key")


def test_non_interactive_init_asks_nothing(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init", "--non-interactive"], env=env_for(tmp_path))
    assert result.exit_code == 0 and "Model" not in result.output
    assert load_config(tmp_path / "config.yaml").llm.model == "openai/gpt-4o-mini"


async def test_rerunning_init_on_a_server_config_names_the_server_not_a_provider_variable(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    write_config(tmp_path, fake_llm)
    code, out, err = await run_cli(tmp_path, "init")
    assert code == 0, err
    assert f"Next: check llm.model and llm.api_base ({fake_llm.base_url})" in out
    assert "OPENAI_API_KEY" not in out
    (tmp_path / "config.yaml").write_text("llm:\n  model: openai/gpt-4o-mini\n")
    code, out, err = await run_cli(tmp_path, "init")
    assert code == 0, err
    assert "Next: check llm.model (and llm.api_key, or the provider's variable such as OPENAI_API_KEY)" in out
