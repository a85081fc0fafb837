"""MEMORY.md and HISTORY.md changed as one: both staged, a marker written, both renamed; a restart finishes or
undoes a change a kill interrupted, and sweeps the temp files a kill left behind.

The marker is the commit point. Without it, staged files are an unfinished change and are deleted (the pair stays
as it was); with it, the staged files that are left are renamed into place (the change completes).
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path

from bot.storage.private_file import sync_folder, write_private

logger = logging.getLogger(__name__)

MARKER = ".memory-change"
STAGED = ".staged"
STALE_TEMP = 3600.0  # seconds after which a writer's temp file is a kill's leftover, never a write under way
PAIR = ("MEMORY.md", "HISTORY.md")


def _staged(path: Path) -> Path:
    return path.with_name(f".{path.name}{STAGED}")


def write_pair(directory: Path, memory: str, history: str) -> None:
    """Replace MEMORY.md and HISTORY.md with these texts as one change (under the scope's lock)."""
    finish_pair(directory)
    targets = {directory / name: text for name, text in zip(PAIR, (memory, history), strict=True)}
    for path, text in targets.items():
        write_private(_staged(path), text)
    write_private(directory / MARKER, "\n".join(path.name for path in targets) + "\n")
    _complete(directory)


def finish_pair(directory: Path, now: float | None = None) -> None:
    """Finish a change the marker committed, or undo one it did not; then remove writers' stale temp files."""
    if not directory.is_dir():
        return
    if (directory / MARKER).exists():
        logger.info("memory %s: finishing a change of MEMORY.md and HISTORY.md cut short", directory)
        _complete(directory)
    for name in PAIR:
        staged = _staged(directory / name)
        if staged.exists():
            logger.info("memory %s: undoing an unfinished change of %s", directory, name)
            staged.unlink()
    cutoff = (time.time() if now is None else now) - STALE_TEMP
    for name in PAIR:
        for temp in directory.glob(f".{name}.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                if temp.stat().st_mtime < cutoff:
                    temp.unlink()
                    logger.info("memory %s: removed %s, left by a write that was cut short", directory, temp.name)


def _complete(directory: Path) -> None:
    """Rename the staged files that are left into place, then drop the marker."""
    for name in PAIR:
        staged = _staged(directory / name)
        with contextlib.suppress(FileNotFoundError):
            os.replace(staged, directory / name)
    sync_folder(directory)
    (directory / MARKER).unlink(missing_ok=True)
    sync_folder(directory)
