from pathlib import Path

import pytest

from bot.config.durations import parse_duration
from bot.config.loader import load_config
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.setup.home import bundled


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def error_for(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, text), env=env or {})
    return str(info.value)


def test_example_config_loads_with_every_design_key(tmp_path: Path) -> None:
    config = load_config(bundled("config.example.yaml"), env={})
    assert config.llm.model == "openai/gpt-4o-mini"
    assert config.agent.queue_mode == "collect"
    assert config.channels.slack.reply_in_thread is True
    assert config.tools.by_role.guest == ["web_search", "web_fetch", "load_skill"]
    assert config.scheduler.misfire_grace == 600
    assert config.heartbeat.interval == 1800


def test_env_interpolation_with_and_without_default(tmp_path: Path) -> None:
    path = write(tmp_path, 'llm:\n  api_key: "${KEY}"\n  model: "${MODEL:-openai/x}"\n')
    config = load_config(path, env={"KEY": "sk-123"})
    assert config.llm.api_key.get_secret_value() == "sk-123"
    assert config.llm.model == "openai/x"
    assert "sk-123" not in repr(config)


def test_missing_env_var_names_the_key(tmp_path: Path) -> None:
    message = error_for(tmp_path, 'channels:\n  telegram:\n    token: "${TG_TOKEN}"\n')
    assert message.startswith("channels.telegram.token:")
    assert "TG_TOKEN" in message


def test_unknown_key_suggests_the_close_match(tmp_path: Path) -> None:
    message = error_for(tmp_path, "llm:\n  max_tokns: 10\n")
    assert message == "llm.max_tokns: unknown key; did you mean 'max_tokens'?"


def test_wrong_type_names_the_key(tmp_path: Path) -> None:
    assert error_for(tmp_path, "agent:\n  max_iterations: lots\n").startswith("agent.max_iterations:")


def test_bad_choice_says_what_is_allowed(tmp_path: Path) -> None:
    message = error_for(tmp_path, "agent:\n  queue_mode: shuffle\n")
    assert message.startswith("agent.queue_mode:") and "collect" in message and "followup" in message


def test_bad_duration_names_the_key(tmp_path: Path) -> None:
    message = error_for(tmp_path, "heartbeat:\n  interval: soon\n")
    assert message.startswith("heartbeat.interval:") and "30s" in message


def test_yaml_syntax_error_gives_the_line(tmp_path: Path) -> None:
    assert "YAML syntax error at line 2" in error_for(tmp_path, "llm:\n  model: x: y\n")


def test_missing_file_says_how_to_create_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="relaybot init"):
        load_config(tmp_path / "nope.yaml")


def test_unknown_timezone_is_rejected(tmp_path: Path) -> None:
    assert error_for(tmp_path, "timezone: Mars/Olympus\n").startswith("timezone:")


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "workspace: ws\nstate_dir: st\n"), env={})
    assert config.workspace == tmp_path / "ws"
    assert config.state_dir == tmp_path / "st"


def test_durations() -> None:
    assert parse_duration("30s") == 30
    assert parse_duration("10m") == 600
    assert parse_duration("1h") == 3600
    assert parse_duration(5) == 5
    with pytest.raises(ValueError):
        parse_duration("ten minutes")


def test_secrets_lists_every_configured_token(tmp_path: Path) -> None:
    config = Config.model_validate(
        {
            "workspace": tmp_path,
            "state_dir": tmp_path,
            "llm": {"api_key": "sk-a"},
            "channels": {"telegram": {"token": "tg-b"}},
        }
    )
    assert sorted(config.secrets()) == ["sk-a", "tg-b"]


def test_exec_sandbox_and_access_keys_are_checked(tmp_path: Path) -> None:
    config = load_config(bundled("config.example.yaml"), env={})
    assert (config.tools.exec.sandbox, config.tools.exec.network, config.tools.exec.env) == ("auto", True, {})
    assert config.access.max_pending == 10
    assert "tools.exec.sandbox: Input should be 'auto', 'bwrap' or 'off'" in error_for(
        tmp_path, "tools:\n  exec:\n    sandbox: docker\n"
    )
    assert error_for(tmp_path, "tools:\n  exec:\n    env:\n      BAD-NAME: x\n").startswith(
        "tools.exec.env: 'BAD-NAME' is not an environment variable name"
    )
    assert error_for(tmp_path, "access:\n  max_pending: 0\n").startswith("access.max_pending: Input should be greater")


def test_a_loaded_config_knows_its_file(tmp_path: Path) -> None:
    assert load_config(write(tmp_path, "{}\n"), env={}).source == (tmp_path / "config.yaml").resolve()


def test_trust_limits_have_their_defaults_and_name_their_keys(tmp_path: Path) -> None:
    config = load_config(bundled("config.example.yaml"), env={})
    assert config.agent.turn_timeout == 600
    assert (config.agent.max_inbound_chars, config.agent.inline_attachment_chars) == (32_000, 20_000)
    assert config.access.rate_limit == 20
    assert error_for(tmp_path, "access:\n  rate_limit: -1\n").startswith("access.rate_limit:")
    assert error_for(tmp_path, "agent:\n  turn_timeout: 0\n").startswith("agent.turn_timeout:")
    assert error_for(tmp_path, "agent:\n  turn_timeout: forever\n").startswith("agent.turn_timeout:")


def test_the_redis_bus_needs_a_url(tmp_path: Path) -> None:
    assert error_for(tmp_path, "bus:\n  backend: redis\n").startswith("bus.url:")
    config = load_config(write(tmp_path, "bus:\n  backend: redis\n  url: redis://r:6379/0\n  lease: 5s\n"), env={})
    assert (config.bus.backend, config.bus.lease, config.bus.claim_idle) == ("redis", 5.0, 30.0)


def test_mcp_server_needs_exactly_one_of_command_and_url(tmp_path: Path) -> None:
    both = error_for(tmp_path, "mcp_servers:\n  x:\n    command: a\n    url: http://127.0.0.1/mcp\n")
    assert both == "mcp_servers.x: give either command (a stdio server) or url (a streamable HTTP server)"
    assert "is not a server name" in error_for(tmp_path, "mcp_servers:\n  a__b:\n    command: a\n")
    assert error_for(tmp_path, "mcp_servers:\n  x:\n    command: a\n    trust: root\n").startswith(
        "mcp_servers.x.trust:"
    )


def test_mcp_server_timeout_reads_a_duration(tmp_path: Path) -> None:
    text = "mcp_servers:\n  x:\n    url: http://127.0.0.1/mcp\n    timeout: 2m\n"
    config = load_config(write(tmp_path, text), env={})
    assert config.mcp_servers["x"].timeout == 120
    assert config.mcp_servers["x"].trust == "owner"


def test_streaming_keys_default_and_bad_values_name_the_key(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "channels:\n  slack:\n    stream_interval: 500ms\n"), env={})
    telegram = config.channels.telegram
    assert (telegram.streaming, telegram.stream_interval, telegram.show_tool_progress) == ("auto", 1.0, True)
    assert config.channels.slack.stream_interval == 0.5 and not telegram.show_reasoning
    assert config.llm.transcription_model is None
    message = error_for(tmp_path, "channels:\n  discord:\n    streaming: sometimes\n")
    assert "channels.discord.streaming" in message and "'auto', 'edit' or 'off'" in message


def test_a_group_rule_naming_an_unknown_persona_names_its_key(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "channels:\n  telegram:\n    groups:\n      '-100':\n        topics:\n          '7': {persona: x}\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert caught.value.key == "channels.telegram.groups.-100.topics.7.persona"


def test_group_rules_reject_unknown_keys_and_bad_queue_modes(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("channels:\n  discord:\n    groups:\n      '123': {queue_mode: later}\n")
    with pytest.raises(ConfigError, match="queue_mode"):
        load_config(path, env={})


def test_chat_models_need_their_own_aliases_and_their_keys_stay_secret(tmp_path: Path) -> None:
    twice = "llm:\n  models:\n    - {name: openai/a, alias: fast}\n    - {name: openai/b, alias: fast}\n"
    assert error_for(tmp_path, twice).startswith("llm.models:")
    assert error_for(tmp_path, "llm:\n  models:\n    - {name: openai/a, alias: default}\n").startswith("llm.models:")
    assert error_for(tmp_path, "llm:\n  models:\n    - {name: openai/a}\n").startswith("llm.models[0].alias:")
    keyed = "llm:\n  models:\n    - {name: openai/a, alias: fast, api_key: sk-model-key}\n"
    assert "sk-model-key" in load_config(write(tmp_path, keyed), env={}).secrets()


def test_reactions_approvals_and_ask_timeout_name_their_keys(tmp_path: Path) -> None:
    message = error_for(tmp_path, "channels:\n  slack:\n    reactions: loud\n")
    assert message.startswith("channels.slack.reactions:") and "status" in message
    assert error_for(tmp_path, "approvals:\n  by: anyone\n").startswith("approvals.by:")
    assert error_for(tmp_path, "tools:\n  ask_timeout: never\n").startswith("tools.ask_timeout:")


def test_discord_command_guilds_are_server_ids(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, "channels:\n  discord:\n    command_guilds: [123, '456']\n"), env={})
    assert config.channels.discord.command_guilds == [123, 456]
    assert "channels.discord.command_guilds" in error_for(
        tmp_path, "channels:\n  discord:\n    command_guilds: [general]\n"
    )
