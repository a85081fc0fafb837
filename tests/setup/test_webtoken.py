"""`relaybot init` puts a fresh API token into a new config; the web chat's login is printed only with the channel on
(tests/setup/test_init_wizard.py answers yes on a terminal)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from bot.cli.main import app
from bot.config.loader import load_config
from tests.support.cli_process import env_for


def test_init_generates_an_api_token_and_prints_no_login_while_the_channel_is_off(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["init"], env=env_for(tmp_path))
    assert result.exit_code == 0, result.output
    config_file = tmp_path / "config.yaml"
    [token] = [t.token.get_secret_value() for t in load_config(config_file, env={}).channels.api.tokens]
    assert len(token) >= 40
    assert token not in result.output and "login form" not in result.output and "18790" not in result.output
    assert config_file.stat().st_mode & 0o777 == 0o600
    again = CliRunner().invoke(app, ["init"], env=env_for(tmp_path))
    assert token not in again.output
    assert load_config(config_file, env={}).channels.api.tokens[0].token.get_secret_value() == token


def test_two_inits_make_different_tokens(tmp_path: Path) -> None:
    tokens = []
    for home in (tmp_path / "a", tmp_path / "b"):
        CliRunner().invoke(app, ["init"], env=env_for(home))
        tokens.append(load_config(home / "config.yaml", env={}).channels.api.tokens[0].token.get_secret_value())
    assert tokens[0] != tokens[1]


def test_init_writes_a_symlinked_config_at_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "relaybot.yaml"  # not there yet: init makes it, through the link
    target.parent.mkdir()
    (tmp_path / "home").mkdir()
    link = tmp_path / "home" / "config.yaml"
    link.symlink_to(target)
    result = CliRunner().invoke(app, ["init"], env=env_for(tmp_path / "home"))
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and link.resolve() == target
    assert target.stat().st_mode & 0o777 == 0o600
    [token] = [t.token.get_secret_value() for t in load_config(target, env={}).channels.api.tokens]
    assert len(token) >= 40
