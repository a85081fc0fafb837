"""`triggers:` in the config: one-line errors that name the key, and the defaults the issue promises."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bus import ChatRef, Trust
from bot.config.loader import load_config
from bot.config.schema import Config
from bot.errors import ConfigError

BASE = "workspace: {tmp}/ws\nstate_dir: {tmp}/state\ntriggers:\n"
GITHUB = "  - name: github\n    secret: s\n    chat: telegram:5\n"


def load(tmp_path: Path, triggers: str) -> Config:
    path = tmp_path / "config.yaml"
    path.write_text(BASE.format(tmp=tmp_path) + triggers)
    return load_config(path, env={})


def error_for(tmp_path: Path, triggers: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, triggers)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_defaults_are_guest_own_session_one_megabyte_and_thirty_a_minute(tmp_path: Path) -> None:
    [trigger] = load(tmp_path, GITHUB).triggers
    assert trigger.trust is Trust.GUEST and trigger.session == "own" and trigger.max_bytes == 1_048_576
    assert trigger.rate == "30/minute" and trigger.signature_header == "X-Signature"
    assert trigger.session_chat == ChatRef("trigger", "github") and trigger.target == ChatRef("telegram", "5")


def test_an_email_address_is_a_target_and_shared_runs_in_its_session(tmp_path: Path) -> None:
    [trigger] = load(tmp_path, "  - {name: mail, secret: s, chat: ann@example.org, session: shared}\n").triggers
    assert trigger.session_chat == ChatRef("email", "ann@example.org")


@pytest.mark.parametrize(
    ("triggers", "key", "problem"),
    [
        (GITHUB + "    trust: admin\n", "triggers[0]", "trusted: true"),
        (GITHUB + "    rate: lots\n", "triggers[0].rate", "30/minute"),
        (GITHUB + "    prompt: '{payload.title.__class__} {os.environ}'\n", "triggers[0].prompt", "{os.environ}"),
        (GITHUB + "    delivery_id: body\n", "triggers[0].delivery_id", "header:<Name>"),
        (GITHUB + "    verify: md5\n", "triggers[0].verify", "hmac-sha256"),
        (GITHUB + "    agent: nobody\n", "triggers[0].agent", "unknown agent 'nobody'"),
        (GITHUB + GITHUB, "triggers[1].name", "used twice"),
        ("  - name: Bad Name\n    secret: s\n    chat: telegram:5\n", "triggers[0].name", ""),
        ("  - name: x\n    secret: ''\n    chat: telegram:5\n", "triggers[0].secret", "empty"),
        ("  - name: x\n    secret: s\n    chat: nowhere\n", "triggers[0].chat", "not a chat"),
        ("  - name: x\n    secret: s\n    chat: telegram:5\n    colour: red\n", "triggers[0].colour", "unknown key"),
    ],
)
def test_bad_values_are_one_line_errors_naming_the_key(tmp_path: Path, triggers: str, key: str, problem: str) -> None:
    message = error_for(tmp_path, triggers)
    assert message.startswith(f"{key}") and problem in message


def test_trusted_allows_admin_and_owner(tmp_path: Path) -> None:
    [trigger] = load(tmp_path, GITHUB + "    trust: owner\n    trusted: true\n").triggers
    assert trigger.trust is Trust.OWNER
