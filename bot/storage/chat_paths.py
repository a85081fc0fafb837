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
