"""Where relaybot keeps its files: the home directory and the config file."""

from __future__ import annotations

import os
from pathlib import Path


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
