"""bubblewrap's mounts both sandboxes share: the system read-only, a fresh /proc, /dev and /tmp, hidden paths, and
the flags that tie the sandbox to its parent; each sandbox adds its own folders between them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
DETACHED = ("--die-with-parent", "--new-session", "--cap-drop", "ALL")
"""Last: the sandbox dies with relaybot, has no terminal to push input into, and holds no capabilities."""


def system_mounts() -> list[str]:
    """The system folders read-only (a symlinked one, as on merged-/usr systems, as the same symlink)."""
    args: list[str] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    return args


def fresh_tmp(size: int | None = None) -> list[str]:
    """A new /proc and /dev, and an empty /tmp (of at most `size` bytes when given)."""
    limit = ["--size", str(size)] if size is not None else []
    return ["--proc", "/proc", "--dev", "/dev", *limit, "--tmpfs", "/tmp"]


def system_roots() -> list[Path]:
    """The system folders as they resolve here."""
    return [Path(name).resolve() for name in SYSTEM_DIRS if Path(name).exists()]


def under(path: Path, roots: Iterable[Path]) -> bool:
    """Whether `path` lies in one of `roots`."""
    return any(path.is_relative_to(root) for root in roots)


def hidden(paths: Iterable[Path]) -> list[str]:
    """Cover each folder with an empty tmpfs and each file with /dev/null (a device bind: plain binds are nodev)."""
    args: list[str] = []
    for path in paths:
        args += ["--tmpfs", str(path)] if path.is_dir() else ["--dev-bind", "/dev/null", str(path)]
    return args
