"""End-to-end encryption (the `matrix-e2e` extra): whether it is on, its private store, its per-sync key chores."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from bot.errors import ChannelError
from channels.matrix.calls import call_matrix

logger = logging.getLogger(__name__)

ENABLE_HINT = "pip install 'relaybot[matrix-e2e]'"


def e2e_installed() -> bool:
    """True when matrix-nio's encryption libraries (vodozemac) import."""
    from nio.crypto import ENCRYPTION_ENABLED

    return bool(ENCRYPTION_ENABLED)


def encryption_on(setting: bool | None, installed: bool) -> bool:
    """`channels.matrix.encryption` resolved: unset means on exactly when the extra is installed."""
    if setting is None:
        return installed
    if setting and not installed:
        raise ChannelError(f"channels.matrix.encryption is true, but the e2e extra is missing; {ENABLE_HINT}")
    return setting


def private_store(folder: Path) -> Path:
    """The crypto store's folder (0700), created when absent; its files are made 0600 by `seal`."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    folder.chmod(0o700)
    return folder


def seal(folder: Path) -> None:
    """Make every file in the crypto store owner-only (SQLite creates them with the umask's mode)."""
    for path in folder.iterdir():
        if path.is_file():
            os.chmod(path, 0o600)


async def key_chores(client: Any) -> None:
    """Send queued to-device messages, upload the device's keys, refresh stale device lists, claim one-time keys.

    A failed chore is logged and retried after the next sync; it never stops the sync."""
    chores = [client.send_to_device_messages]
    if client.should_upload_keys:
        chores.append(client.keys_upload)
    if client.should_query_keys:
        chores.append(client.keys_query)
    if client.should_claim_keys:
        chores.append(lambda: client.keys_claim(client.get_users_for_key_claiming()))
    for chore in chores:
        try:
            await call_matrix(chore)
        except ChannelError as exc:
            logger.info("matrix: key chore %s failed (%s); retrying after the next sync", _name(chore), exc)


def _name(chore: Any) -> str:
    return str(getattr(chore, "__name__", "keys_claim"))
