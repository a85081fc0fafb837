"""The bot's own rules (SOUL.md, AGENTS.md, skills/, ...): files tools change only with an owner's approval."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path


class ProtectedPaths:
    """Which workspace paths are protected, and the exec commands an owner approved to change them (once each)."""

    def __init__(self, workspace: Path, entries: Iterable[str]) -> None:
        self._workspace = workspace
        self.entries = tuple(entry for entry in entries if entry.strip("/"))
        self._granted: set[tuple[str, str]] = set()

    def __bool__(self) -> bool:
        return bool(self.entries)

    @property
    def paths(self) -> list[Path]:
        """The protected paths, resolved (the workspace may be a link)."""
        root = self._workspace.expanduser().resolve()
        return [(root / entry.strip("/")).resolve() for entry in self.entries]

    def make_folders(self) -> None:
        """Create the protected folders (`skills/`) that are missing, so a sandbox can hold them read-only."""
        for entry, path in zip(self.entries, self.paths, strict=True):
            if entry.endswith("/"):
                path.mkdir(parents=True, exist_ok=True)

    def covering(self, path: Path) -> str | None:
        """The entry that protects `path` (already resolved), or None."""
        for entry, protected in zip(self.entries, self.paths, strict=True):
            if path == protected or path.is_relative_to(protected):
                return entry
        return None

    def named_in(self, command: str) -> str | None:
        """The first entry a shell command names (so it may change it), or None."""
        for entry in self.entries:
            if entry.strip("/") in command:
                return entry
        return None

    def grant(self, session_key: str, command: str) -> None:
        """Let this exact command, in this session, write the protected paths once."""
        self._granted.add((session_key, command))

    def take(self, session_key: str, command: str) -> bool:
        """Whether the command was granted; the grant is used up."""
        try:
            self._granted.remove((session_key, command))
        except KeyError:
            return False
        return True
