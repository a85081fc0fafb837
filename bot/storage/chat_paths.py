"""Paths named after a chat, made without pathlib interning their names.

pathlib interns every part it parses, and each string CPython interns takes a slot of its table of interned strings
until the table is rebuilt: two new names for each new chat filled a started gateway's table within a few hundred
chats and doubled it (+0.9 MB), though the names themselves were long gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A child from parts already parsed, as pathlib's own directory walks make them (Python 3.11 and 3.12; later
# versions fall back to `/`, which interns).
_CHILD: Callable[[Any, str], Any] | None = getattr(Path, "_make_child_relpath", None)


def chat_path(folder: Path, *names: str) -> Path:
    """`folder / name / …` for names made per chat (a session file, a memory folder): each a plain file name."""
    path = folder
    for name in names:
        if name in ("", ".", "..") or os.sep in name or (os.altsep and os.altsep in name):
            raise ValueError(f"not a plain file name: {name!r}")
        path = path / name if _CHILD is None else _CHILD(path, name)
    return path


def relative_name(folder: Path, root: Path) -> str:
    """`folder`'s real path below `root`'s as a `/` string ("." for `root` itself, "outside/…" for a folder beyond
    it), made in strings: pathlib would intern each part."""
    real, top = os.path.realpath(folder), os.path.realpath(root).rstrip(os.sep)
    if real == top:
        return "."
    if real.startswith(top + os.sep):
        return real[len(top) + 1 :].replace(os.sep, "/")
    return "outside/" + os.path.splitdrive(real)[1].lstrip(os.sep).replace(os.sep, "/")
