"""Where Matrix sync resumes: the last `next_batch` whose events are all journaled, in one private state file."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from bot.storage.private_file import write_private

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SyncState:
    """The account the state belongs to, its device (and token, when relaybot logged in by password), the sync token."""

    user_id: str
    device_id: str | None = None
    access_token: str | None = None
    next_batch: str | None = None


class SyncStateFile:
    """The state file (0600); a file for another account, or an unreadable one, counts as none."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def load(self, user_id: str) -> SyncState:
        """The state saved for `user_id`, or a fresh one."""
        try:
            data = json.loads(self._path.read_text())
            state = SyncState(**data)
        except FileNotFoundError:
            return SyncState(user_id)
        except (OSError, ValueError, TypeError) as exc:
            logger.warning("matrix: %s is unreadable (%s); syncing from now", self._path, exc)
            return SyncState(user_id)
        return state if state.user_id == user_id else SyncState(user_id)

    def save(self, state: SyncState) -> None:
        """Write the state whole, replacing the old file."""
        write_private(self._path, json.dumps(asdict(state)))

    def advance(self, state: SyncState, next_batch: str) -> SyncState:
        """Save `next_batch` as where the next start resumes; the state with it."""
        moved = replace(state, next_batch=next_batch)
        self.save(moved)
        return moved
