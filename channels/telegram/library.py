"""python-telegram-bot imported without the command-line client httpx loads beside itself."""

from __future__ import annotations

import sys
import types


def skip_httpx_cli() -> None:
    """Stand in for `httpx._main` before httpx is first imported, so importing telegram does not load rich, pygments
    and click (about 90 ms of CPU at launch); httpx then defines its own `main` that says the CLI is unavailable."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))
