"""ConfigReload: a valid file is applied (live keys) and reported; an invalid one keeps the running config."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.config.loader import load_config
from bot.config.schema import Config
from bot.ops.reload import ConfigReload


def write(path: Path, text: str) -> Path:
    path.write_text(f"workspace: {path.parent}/w\nstate_dir: {path.parent}/s\n{text}")
    return path


async def test_live_keys_are_applied_and_the_others_named(tmp_path: Path) -> None:
    path = write(tmp_path / "config.yaml", "budgets: {user: {daily_tokens: 10}}\n")
    applied: list[Config] = []

    async def apply(config: Config) -> None:
        applied.append(config)

    reloader = ConfigReload(load_config(path), apply)
    write(path, "budgets: {user: {daily_tokens: 99}}\nbus: {prefix: other}\n")
    report = await reloader.reload()
    assert report.applied == ["budgets.user.daily_tokens"] and report.restart_needed == ["bus.prefix"]
    assert applied[0].budgets.user is not None and applied[0].budgets.user.daily_tokens == 99
    assert reloader.current is applied[0]


async def test_invalid_file_keeps_the_running_config_with_one_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(tmp_path / "config.yaml", "")
    applied: list[Config] = []

    async def apply(config: Config) -> None:
        applied.append(config)

    running = load_config(path)
    reloader = ConfigReload(running, apply)
    write(path, "agent: {max_iterations: lots}\n")
    with caplog.at_level(logging.INFO, "bot.ops.reload"):
        report = await reloader.reload()
    assert report.error is not None and report.error.startswith("agent.max_iterations:")
    assert reloader.current is running and applied == []
    assert [r.levelname for r in caplog.records] == ["ERROR"]


async def test_a_bot_added_removed_or_given_a_new_token_is_one_line_each_and_waits_for_a_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def telegram(*accounts: str) -> str:
        return "channels:\n  telegram:\n    token: '1:A'\n    accounts:\n" + "".join(f"      - {a}\n" for a in accounts)

    path = write(tmp_path / "config.yaml", telegram("{name: work, token: '2:B'}", "{name: old, token: '3:C'}"))
    applied: list[Config] = []

    async def apply(config: Config) -> None:
        applied.append(config)

    reloader = ConfigReload(load_config(path), apply)
    write(path, telegram("{name: work, token: '2:X', dm_policy: open}", "{name: home, token: '4:D'}"))
    with caplog.at_level(logging.INFO, "bot.ops.reload"):
        report = await reloader.reload()
    assert report.applied == ["channels.telegram.accounts.work.dm_policy"]
    assert applied[0].channels.telegram.bots()["work"].dm_policy == "open"
    assert [r.getMessage() for r in caplog.records if r.levelname == "WARNING"] == [
        "reload: channels.telegram.accounts.work.token changed; it takes effect after a restart",
        "reload: bot telegram@old removed; it takes effect after a restart",
        "reload: bot telegram@home added; it takes effect after a restart",
    ]
    assert "2:X" not in caplog.text
