"""Where file tools may go: paths relative to the workspace, confined to it when restricted."""

from __future__ import annotations

import os
from pathlib import Path

from bot.errors import ToolError


class WorkspacePaths:
    """Resolves tool paths against the workspace; with `restrict`, refuses any that lead out of it."""

    def __init__(self, root: Path, restrict: bool) -> None:
        self._root = root
        self._restrict = restrict

    @property
    def root(self) -> Path:
        """The workspace's real path (resolved on each use, so a moved or relinked workspace is followed)."""
        return self._root.expanduser().resolve()

    def resolve(self, path: str) -> Path:
        """The real path of `path`, symlinks followed; ToolError when it leads out of a restricted workspace."""
        root = self.root
        try:
            # Resolve first, then compare whole path components: "/ws-evil" is not inside "/ws".
            resolved = (root / os.path.expanduser(path)).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            raise ToolError(f"{path!r} is not a usable path ({exc})") from exc
        if self._restrict and not resolved.is_relative_to(root):
            raise ToolError(
                f"{path!r} is outside the workspace; file tools can only reach files inside it "
                "(tools.restrict_to_workspace is on). Use a path relative to the workspace."
            )
        return resolved

    def display(self, path: Path) -> str:
        """`path` relative to the workspace when it is inside, else absolute."""
        root = self.root
        return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
