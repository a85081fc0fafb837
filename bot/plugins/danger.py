"""What `tools.exec.approval: dangerous` asks about: risky command patterns and writes outside the workspace."""

from __future__ import annotations

import re
from pathlib import Path

_PACKAGE_INSTALL = re.compile(
    r"\b(pip3?|uv\s+pip|pipx|npm|pnpm|yarn|apt|apt-get|dnf|yum|apk|brew|gem|cargo|go)\s+"
    r"(install|i|add|get)\b"
)
DANGEROUS_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("recursive delete (rm -r)", re.compile(r"\brm\s+(-\w*[rR]\w*|--recursive)\b")),
    ("a download piped into a shell", re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b")),
    ("a package install", _PACKAGE_INSTALL),
    ("sudo", re.compile(r"(^|[;&|]\s*)sudo\b")),
    ("recursive chmod or chown", re.compile(r"\b(chmod|chown)\s+(-\w*R\w*|--recursive)\b")),
)
"""What `approval: dangerous` asks about, besides writes outside the workspace."""

_WRITE_TARGETS = (
    re.compile(r">>?\s*([^\s;&|]+)"),  # redirects
    re.compile(r"\btee\s+(?:-a\s+)?([^\s;&|]+)"),
    re.compile(r"\b(?:cp|mv|install|ln)\s+(?:-\S+\s+)*(?:[^\s;&|]+\s+)+([^\s;&|]+)"),  # the last argument
)


def danger(command: str, workspace: Path) -> str | None:
    """Why a command needs approval under `dangerous`, or None when it does not."""
    for reason, pattern in DANGEROUS_PATTERNS:
        if pattern.search(command):
            return reason
    for pattern in _WRITE_TARGETS:
        for target in pattern.findall(command):
            if _outside(target, workspace):
                return f"a write outside the workspace ({target})"
    return None


def _outside(target: str, workspace: Path) -> bool:
    target = target.strip("'\"")
    if target.startswith("&") or target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
        return False
    if target.startswith("~") or ".." in Path(target).parts:
        return True
    if target.startswith("/"):
        return not Path(target).resolve().is_relative_to(workspace.resolve())
    return False
