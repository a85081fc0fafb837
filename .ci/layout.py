"""The house's layout, where import-linter cannot see it: few shared modules in channels/, one package per platform."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHANNELS = ROOT / "channels"
MAX_SHARED_MODULES = 15
PLATFORMS = ("telegram", "discord", "slack", "whatsapp", "email", "console", "api")


def problems() -> list[str]:
    """Each way the tree breaks the layout, as one line."""
    found = []
    shared = sorted(path.name for path in CHANNELS.glob("*.py") if path.name != "__init__.py")
    if len(shared) > MAX_SHARED_MODULES:
        found.append(f"channels/ holds {len(shared)} shared modules, at most {MAX_SHARED_MODULES}: {', '.join(shared)}")
    for platform in PLATFORMS:
        if not (CHANNELS / platform / "channel.py").is_file():
            found.append(f"channels/{platform}/channel.py is missing: each platform is a package with its channel.py")
        if not (ROOT / "tests" / "channels" / platform).is_dir():
            found.append(f"tests/channels/{platform}/ is missing: tests mirror the platform packages")
    return found


if __name__ == "__main__":
    for line in problems():
        print(line)
    sys.exit(1 if problems() else 0)
