"""`agents:` and `bindings:`: each agent falls back to the top level; bad input names the key."""

from pathlib import Path

import pytest

from bot.config.agent_configs import agent_config, agent_names
from bot.config.loader import load_config
from bot.errors import ConfigError

TOP = "workspace: {home}/ws\nstate_dir: {home}/state\nllm:\n  model: openai/top\n  max_tokens: 900\n"


def load(tmp_path: Path, text: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.yaml"
    path.write_text(TOP.format(home=tmp_path) + text)
    return load_config(path, env={})


def error_for(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, text)
    return info.value


def test_a_single_agent_config_is_the_default_agent_unchanged(tmp_path: Path) -> None:
    config = load(tmp_path, "")
    assert agent_names(config) == ["main"]
    assert agent_config(config, "main") is config


def test_an_agent_overrides_what_it_sets_and_inherits_the_rest(tmp_path: Path) -> None:
    config = load(
        tmp_path, "agents:\n  - name: work\n    llm: {model: openai/work}\n    tools: {by_role: {guest: []}}\n"
    )
    work = agent_config(config, "work")
    assert work.llm.model == "openai/work"
    assert work.llm.max_tokens == 900  # from the top level
    assert work.tools.by_role.guest == []
    assert work.tools.by_role.user == config.tools.by_role.user
    assert work.workspace == tmp_path / "agents" / "work"
    assert work.state_dir == tmp_path / "state" / "agents" / "work"
    assert work.bus.prefix == "relaybot.work"
    assert work.agents == [] and work.bindings == []
    assert config.workspace == tmp_path / "ws" and config.state_dir == tmp_path / "state"


def test_a_binding_to_an_unknown_agent_is_an_error_naming_the_key(tmp_path: Path) -> None:
    error = error_for(tmp_path, "bindings:\n  - {agent: nobody, channel: telegram}\n")
    assert error.key == "bindings[0].agent"
    assert "nobody" in str(error)


def test_two_agents_on_one_workspace_are_refused(tmp_path: Path) -> None:
    error = error_for(
        tmp_path,
        f"agents:\n  - name: a\n    workspace: {tmp_path}/shared\n  - name: b\n    workspace: {tmp_path}/shared\n",
    )
    assert error.key == "agents[1].workspace"
    error = error_for(tmp_path, f"agents:\n  - name: a\n    workspace: {tmp_path}/ws\n")
    assert "top-level workspace" in str(error)


def test_duplicate_and_reserved_names_are_refused(tmp_path: Path) -> None:
    assert error_for(tmp_path, "agents:\n  - name: a\n  - name: a\n").key == "agents[1].name"
    assert error_for(tmp_path, "agents:\n  - name: main\n").key == "agents[0].name"


def test_tied_bindings_are_an_error_naming_both(tmp_path: Path) -> None:
    text = (
        "agents:\n  - name: a\n  - name: b\n"
        "bindings:\n  - {agent: a, channel: discord, server: '1'}\n  - {agent: b, channel: discord, server: '1'}\n"
    )
    error = error_for(tmp_path, text)
    assert error.key == "bindings[1]"
    assert "bindings[0]" in str(error)


def test_bindings_at_different_levels_do_not_tie(tmp_path: Path) -> None:
    text = (
        "agents:\n  - name: a\n  - name: b\n"
        "bindings:\n  - {agent: a, channel: discord, server: '1'}\n  - {agent: b, channel: discord, chat: '9'}\n"
        "  - {agent: b, channel: telegram, account: work}\n  - {agent: a, channel: telegram, account: home}\n"
        "channels:\n  telegram:\n    accounts: [{name: work, token: '1:A'}, {name: home, token: '2:B'}]\n"
    )
    assert len(load(tmp_path, text).bindings) == 4


def test_a_binding_to_an_account_the_platform_does_not_have_names_its_key(tmp_path: Path) -> None:
    text = (
        "agents:\n  - name: a\nbindings:\n  - {agent: a, channel: telegram, account: wrok}\n"
        "channels:\n  telegram:\n    accounts: [{name: work, token: '1:A'}]\n"
    )
    error = error_for(tmp_path, text)
    assert (
        error.key == "bindings[0].account"
        and "no telegram account 'wrok' (channels.telegram.accounts: work)" in str(error)
    )


def test_a_bad_agent_setting_names_the_agents_key(tmp_path: Path) -> None:
    error = error_for(tmp_path, "agents:\n  - name: a\n    llm: {max_tokens: -1}\n")
    assert error.key == "agents[0].llm.max_tokens"
    error = error_for(tmp_path, "agents:\n  - name: a\n    llm: {no_such_key: 1}\n")
    assert error.key == "agents[0].llm.no_such_key"


def test_ask_agent_names_known_agents_only(tmp_path: Path) -> None:
    error = error_for(tmp_path, "agents:\n  - name: a\n    tools: {ask_agent: [ghost]}\n")
    assert error.key == "agents[0].tools.ask_agent"
    config = load(tmp_path, "agents:\n  - name: a\n    tools: {ask_agent: [main]}\n")
    assert agent_config(config, "a").tools.ask_agent == ["main"]
    assert config.tools.ask_agent == []


def test_an_agents_workspace_is_read_from_the_config_files_folder(tmp_path: Path) -> None:
    config = load(tmp_path, "agents:\n  - name: work\n    workspace: work-ws\n")
    assert agent_config(config, "work").workspace == tmp_path / "work-ws"


def test_a_binding_that_can_never_match_is_refused_naming_its_key(tmp_path: Path) -> None:
    agents = "agents:\n  - name: work\n"
    error = error_for(tmp_path, agents + "bindings:\n  - {agent: work, channel: cli, chat: x}\n")
    assert error.key == "bindings[0].channel" and "no channel 'cli', so it never matches" in str(error)
    error = error_for(tmp_path, agents + "bindings:\n  - {agent: work, channel: console}\n")
    assert error.key == "bindings[0].channel" and "the terminal chat always talks to main" in str(error)
    error = error_for(tmp_path, agents + "bindings:\n  - {agent: work, channel: api, chat: work}\n")
    assert error.key == "bindings[0].chat" and "no API caller 'work'" in str(error)
    assert "chat: <token name> (cli for `relaybot agent`), thread: <session>" in str(error)
    error = error_for(tmp_path, agents + "bindings:\n  - {agent: work, channel: api, server: '1'}\n")
    assert error.key == "bindings[0].server"


def test_an_api_binding_names_a_token_or_cli_as_its_chat(tmp_path: Path) -> None:
    text = (
        "agents:\n  - name: work\nchannels:\n  api:\n    tokens: [{token: t0k3n, name: phone}]\n"
        "bindings:\n  - {agent: work, channel: api, chat: cli, thread: work}\n"
        "  - {agent: work, channel: api, chat: phone}\n  - {agent: work, channel: trigger, chat: deploys}\n"
    )
    assert len(load(tmp_path, text).bindings) == 3
