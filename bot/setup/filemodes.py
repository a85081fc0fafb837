"""Private files: what relaybot keeps under its home is readable by its own user only (0700 folders, 0600 files)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path

logger = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077


def private_umask() -> None:
    """From now on this process (and every child, exec's commands included) creates private files and folders."""
    os.umask(PRIVATE_UMASK)


def keep_private(roots: Iterable[Path]) -> int:
    """Set the private umask and take group and other access from everything under `roots`; return how many changed.

    Only the group and other bits go, so an executable script stays executable (0700). Symlinks are not followed.
    """
    private_umask()
    changed = 0
    for root in _outermost(roots):
        for path in _tree(root):
            try:
                mode = stat.S_IMODE(os.lstat(path).st_mode)
                if mode & 0o077:
                    os.chmod(path, mode & ~0o077)
                    changed += 1
            except OSError:
                continue  # vanished meanwhile, or not ours: nothing to tighten
    if changed:
        shown = ", ".join(str(root) for root in _outermost(roots))
        logger.warning("made %d files and folders under %s private (0700 folders, 0600 files)", changed, shown)
    return changed


def _outermost(roots: Iterable[Path]) -> list[Path]:
    """The existing roots, without those inside another one."""
    resolved = sorted({root.resolve() for root in roots if root.exists()}, key=lambda path: len(path.parts))
    kept: list[Path] = []
    for root in resolved:
        if not any(root.is_relative_to(outer) for outer in kept):
            kept.append(root)
    return kept


def _tree(root: Path) -> Iterable[str]:
    yield str(root)
    for folder, folders, files in os.walk(root):
        for name in [*folders, *files]:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                yield path
