"""Which keys changed between two configs, and which of them a running gateway takes live."""

from __future__ import annotations

from pathlib import Path

from bot.config.changes import changed_keys, is_live
from bot.config.schema import Config


def config(**data: object) -> Config:
    return Config.model_validate({"workspace": Path("/w"), "state_dir": Path("/s"), **data})


def test_changed_keys_name_each_leaf_that_differs() -> None:
    old = config(channels={"telegram": {"token": "a", "allow_from": ["1"]}})
    new = config(
        channels={"telegram": {"token": "b", "allow_from": ["1", "2"]}}, llm={"model": "openai/other"}, roles={}
    )
    assert changed_keys(old, new) == ["llm.model", "channels.telegram.allow_from", "channels.telegram.token"]
    assert changed_keys(old, old) == []


def test_live_keys_and_restart_keys() -> None:
    live = ["personas", "routes", "llm.model", "budgets.guest", "roles", "channels.slack.allow_from"]
    live += ["channels.telegram.group_policy", "tools.by_role.guest", "heartbeat.interval", "log_level"]
    restart = ["channels.telegram.token", "bus.backend", "channels.api.port", "channels.api.host", "workspace"]
    assert all(is_live(key) for key in live)
    assert not any(is_live(key) for key in restart)
