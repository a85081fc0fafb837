"""The one way relaybot writes a state file: all or nothing, durable, and readable by its own user only."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

PRIVATE_FILE_MODE = 0o600
PRIVATE_FOLDER_MODE = 0o700


def write_private(path: Path, data: str | bytes, mode: int = PRIVATE_FILE_MODE) -> None:
    """Replace `path` with `data`: a synced temp file in the same folder renamed over it, then the folder synced.

    A reader sees the old content or the new, never a torn file; after a crash the new content is either all
    there or not at all. The file gets `mode` (0600 unless a caller keeps a file's own mode), a new folder 0700.
    A `path` that is a symbolic link (a config kept in a dotfiles repository) is written at its target; the link stays.
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    path.parent.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER_MODE)
    payload = data.encode() if isinstance(data, str) else data
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    sync_folder(path.parent)


def sync_folder(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
