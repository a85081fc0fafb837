"""The folders relaybot owns: made on start, and kept private to its user."""

from __future__ import annotations

from pathlib import Path

from bot.config.paths import home_dir
from bot.config.schema import Config
from bot.setup.filemodes import keep_private


def private_roots(config: Config) -> list[Path]:
    """What relaybot keeps private: the workspace, the state, and the relaybot home when the config lives there."""
    roots = [config.workspace, config.state_dir]
    if config.source is not None and config.source.parent == home_dir().resolve():
        roots.append(config.source.parent)
    return roots


def prepare_folders(config: Config) -> None:
    """Create the workspace and the state folder, and keep what relaybot owns private."""
    config.workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
    config.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    keep_private(private_roots(config))
