"""`channels.<platform>.accounts`: more bots per platform, each over its platform's settings; bad entries named."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config.changes import changed_keys, is_live
from bot.config.loader import load_config
from bot.config.schema import Config
from bot.errors import ConfigError

TELEGRAM = "channels:\n  telegram:\n    enabled: true\n    token: '1:A'\n    allow_from: [7]\n    accounts:\n"


def config(**data: object) -> Config:
    return Config.model_validate({"workspace": Path("/w"), "state_dir": Path("/s"), **data})


def error_for(tmp_path: Path, text: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path, env={})
    return str(info.value)


def test_each_account_is_a_bot_with_its_own_settings_over_the_platforms() -> None:
    telegram = config(
        channels={
            "telegram": {
                "token": "1:A",
                "api_base": "http://a/bot",
                "allow_from": [7],
                "dm_policy": "allowlist",
                "accounts": [{"name": "work", "token": "2:B", "allow_from": [8]}, {"name": "home", "token": "3:C"}],
            }
        }
    ).channels.telegram
    bots = telegram.bots()
    assert list(bots) == [None, "work", "home"]
    assert bots[None] is telegram
    work, home = bots["work"], bots["home"]
    assert (work.token.get_secret_value(), work.allow_from, work.dm_policy) == ("2:B", ["8"], "allowlist")
    assert (home.token.get_secret_value(), home.allow_from, home.api_base) == ("3:C", ["7"], "http://a/bot")
    assert work.accounts == [] and home.accounts == []


def test_without_its_own_token_a_platform_runs_only_its_accounts() -> None:
    discord = config(channels={"discord": {"accounts": [{"name": "support", "token": "x"}]}}).channels.discord
    assert list(discord.bots()) == ["support"]
    assert list(config().channels.discord.bots()) == [None]  # today's config: one default bot, unchanged


def test_every_bot_has_a_channel_key() -> None:
    channels = config(
        channels={
            "telegram": {"token": "a", "accounts": [{"name": "work", "token": "b"}]},
            "slack": {"accounts": [{"name": "team2", "bot_token": "xoxb", "app_token": "xapp"}]},
        }
    ).channels
    assert list(channels.bot_sections()) == [
        "telegram",
        "telegram@work",
        "discord",
        "slack@team2",
        "matrix",
        "whatsapp",
        "email",
        "mattermost",
        "signal",
        "irc",
        "xmpp",
        "teams",
    ]


@pytest.mark.parametrize(
    ("accounts", "key", "says"),
    [
        ("      - {name: work, token: '2:B'}\n      - {name: work, token: '3:C'}\n", "accounts[1].name", "already"),
        ("      - {name: work, token: '2:B'}\n      - {name: home}\n", "accounts[1].token", "Field required"),
        ("      - {name: work, token: ''}\n", "accounts[0].token", "empty token"),
        ("      - {name: 'a:b', token: '2:B'}\n", "accounts[0].name", "pattern"),
        ("      - {name: work, token: '2:B', tokn: x}\n", "accounts[0].tokn", "did you mean 'token'"),
    ],
)
def test_a_bad_account_is_refused_naming_its_key(tmp_path: Path, accounts: str, key: str, says: str) -> None:
    error = error_for(tmp_path, TELEGRAM + accounts)
    assert error.startswith(f"channels.telegram.{key}:") and says in error, error


def test_a_slack_account_needs_both_tokens(tmp_path: Path) -> None:
    text = "channels:\n  slack:\n    accounts:\n      - {name: b, bot_token: xoxb, app_token: ' '}\n"
    assert error_for(tmp_path, text).startswith("channels.slack.accounts[0].app_token: account 'b' has an empty")


def test_an_accounts_own_group_names_a_known_persona(tmp_path: Path) -> None:
    text = TELEGRAM + "      - {name: work, token: '2:B', groups: {'-5': {persona: nobody}}}\n"
    assert error_for(tmp_path, text).startswith("channels.telegram.accounts[0].groups.-5.persona: unknown persona")


def test_a_reload_names_a_bot_added_or_removed_and_its_token_as_restart_keys() -> None:
    def with_accounts(*accounts: dict[str, object]) -> Config:
        return config(channels={"telegram": {"token": "a", "accounts": list(accounts)}})

    old = with_accounts({"name": "work", "token": "b", "allow_from": [1]}, {"name": "gone", "token": "c"})
    new = with_accounts({"name": "work", "token": "B", "allow_from": [2]}, {"name": "new", "token": "d"})
    keys = changed_keys(old, new)
    assert keys == [
        "channels.telegram.accounts.work.allow_from",
        "channels.telegram.accounts.work.token",
        "channels.telegram.accounts.gone",
        "channels.telegram.accounts.new",
    ]
    assert [key for key in keys if is_live(key)] == ["channels.telegram.accounts.work.allow_from"]
