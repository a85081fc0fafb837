"""Backing up a relaybot home (config, workspaces, state, Redis keys) and restoring it into an empty home."""

from __future__ import annotations

import logging
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bot.backup.archive import unpack_archive, write_archive
from bot.backup.manifest import Manifest
from bot.backup.redis_keys import REDIS_MEMBER, export_keys, import_keys
from bot.backup.snapshot import copy_plain, snapshot_folder
from bot.config.schema import Config
from bot.errors import BackupError

logger = logging.getLogger(__name__)

CONFIG_MEMBER = "config.yaml"
WORKSPACE = "workspace"
AGENTS = "agents"  # each further agent's workspace, by name (its state is inside the state folder already)
STATE = "state"


@dataclass(frozen=True, slots=True)
class Restored:
    """Where a restore put things, and how many Redis keys it put back."""

    home: Path
    manifest: Manifest
    redis_keys: int


def create_backup(config: Config, target: Path) -> Manifest:
    """Write one archive of the config, every agent's workspace and the state (and the bus's Redis keys) while
    the bot may run."""
    redis = config.bus.url if config.bus.backend == "redis" else None
    with tempfile.TemporaryDirectory(prefix="relaybot-backup-") as staging_name:
        staging = Path(staging_name)
        if config.source is not None:
            copy_plain(config.source, staging / CONFIG_MEMBER)
        snapshot_folder(config.workspace, staging / WORKSPACE)
        for agent in config.agents:
            workspace = agent.workspace_under(config.workspace)
            if workspace.is_dir():
                snapshot_folder(workspace, staging / AGENTS / agent.name)
        snapshot_folder(config.state_dir, staging / STATE)
        if redis is not None:
            keys = export_keys(redis, config.bus.prefix, staging / REDIS_MEMBER)
            logger.info("backup: %d Redis keys under %s:", keys, config.bus.prefix)
        manifest = write_archive(staging, target, config.bus.prefix if redis else None)
    logger.info("backup written to %s (%d files)", target, len(manifest.files))
    return manifest


def restore_backup(archive: Path, home: Path) -> Restored:
    """Unpack `archive` into `home`, which must be empty or absent; then put its Redis keys back, if any.

    The workspace and state go to `home/workspace` and `home/state`, each further agent's workspace to
    `home/agents/<name>`: where a config without explicit `workspace` or `state_dir` keys looks for them.
    """
    if home.exists() and (not home.is_dir() or any(home.iterdir())):
        raise BackupError(f"{home} is not empty; restore only into an empty or new home", str(archive))
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    manifest = unpack_archive(archive, home)
    keys = 0
    dump = home / REDIS_MEMBER
    if dump.exists():
        keys = _restore_redis(archive, home, dump, manifest)
    return Restored(home, manifest, keys)


def _restore_redis(archive: Path, home: Path, dump: Path, manifest: Manifest) -> int:
    from bot.config.loader import load_config
    from bot.errors import ConfigError

    try:
        config = load_config(home / CONFIG_MEMBER)
    except ConfigError as exc:
        raise BackupError(
            f"the restored config does not load, so its Redis keys were not restored: {exc}", str(archive)
        ) from None
    if config.bus.backend != "redis" or config.bus.url is None:
        raise BackupError("the archive holds Redis keys but the restored config uses no Redis bus", str(archive))
    keys = import_keys(config.bus.url, manifest.redis_prefix or config.bus.prefix, dump)
    dump.unlink()
    return keys
