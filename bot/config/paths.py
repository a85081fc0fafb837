"""Where relaybot keeps its files: the home, the config file and a running bot's state files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config.schema import Config


def home_dir() -> Path:
    """The relaybot home: $RELAYBOT_HOME, else ~/.relaybot."""
    return Path(os.environ.get("RELAYBOT_HOME") or "~/.relaybot").expanduser()


def config_path(explicit: Path | None = None) -> Path:
    """Where the config lives: --config, else $RELAYBOT_CONFIG, else <home>/config.yaml."""
    if explicit is not None:
        return explicit.expanduser()
    if env := os.environ.get("RELAYBOT_CONFIG"):
        return Path(env).expanduser()
    return home_dir() / "config.yaml"


def journal_path(config: Config) -> Path:
    """The gateway's inbox and outbox journal."""
    return config.state_dir / "journal.db"


def control_socket(config: Config) -> Path:
    """Where a running gateway listens for CLI commands."""
    return config.state_dir / "control.sock"


def gateway_lock_path(config: Config) -> Path:
    """The lock file that keeps one gateway per home."""
    return config.state_dir / "gateway.lock"


def sessions_dir(config: Config) -> Path:
    """The session logs on the local backend, one JSONL file each."""
    return config.state_dir / "sessions"


def files_path(config: Config) -> Path:
    """The records of every chat's files (ids, names, types, sizes, dates)."""
    return config.state_dir / "files.db"
