"""Targets: a trigger's chat must be on a channel that runs here, and a shared session keeps the chat's agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.agents.bindings import Bindings, routed_bindings
from bot.bus import ChatRef
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.triggers.targets import check_targets


def config(tmp_path: Path, trigger: dict[str, Any], **extra: Any) -> Config:
    data = {"name": "hook", "secret": "s", "chat": "telegram:5", **trigger}
    places = {"workspace": tmp_path / "ws", "state_dir": tmp_path / "st"}
    return Config.model_validate({**places, "triggers": [data], **extra})


def test_a_chat_on_a_channel_that_does_not_run_is_an_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"^triggers\[0\]\.chat: 'slack:C1' is on channel 'slack'"):
        check_targets(config(tmp_path, {"chat": "slack:C1"}), ["telegram", "api"])
    with pytest.raises(ConfigError, match=r"telegram@work"):
        check_targets(config(tmp_path, {"chat": "telegram@work:5"}), ["telegram"])
    check_targets(config(tmp_path, {"chat": "api:ops:alerts"}), ["telegram", "api"])


def test_a_shared_session_must_keep_the_agent_its_chat_is_bound_to(tmp_path: Path) -> None:
    agents = {"agents": [{"name": "work"}], "bindings": [{"agent": "work", "channel": "telegram", "chat": "5"}]}
    with pytest.raises(ConfigError, match=r"^triggers\[0\]\.agent: .*agent work answers"):
        check_targets(config(tmp_path, {"session": "shared", "agent": "main"}, **agents), ["telegram"])
    check_targets(config(tmp_path, {"session": "shared", "agent": "work"}, **agents), ["telegram"])


def test_an_own_session_goes_to_the_agent_the_trigger_names(tmp_path: Path) -> None:
    named = config(tmp_path, {"agent": "work"}, agents=[{"name": "work"}])
    assert Bindings(routed_bindings(named)).route(ChatRef("trigger", "hook")).agent == "work"
    assert Bindings(routed_bindings(named)).route(ChatRef("telegram", "5")).agent == "main"


def test_an_own_session_without_an_agent_goes_to_the_agent_of_its_chat(tmp_path: Path) -> None:
    agents = {"agents": [{"name": "work"}], "bindings": [{"agent": "work", "channel": "telegram", "chat": "5"}]}
    bound = config(tmp_path, {}, **agents)
    assert Bindings(routed_bindings(bound)).route(ChatRef("trigger", "hook")).agent == "work"
