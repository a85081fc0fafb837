"""Where a running bot keeps its state files: pure functions of the config."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config import Config


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
