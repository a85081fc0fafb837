"""Importing python-telegram-bot the channel's way leaves httpx's command-line client (rich, pygments, click) out."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from channels.telegram.library import skip_httpx_cli
skip_httpx_cli()
import httpx
import telegram.ext
print(sorted({name.split(".")[0] for name in sys.modules} & {"rich", "pygments", "click"}), callable(httpx.main))
"""


def test_telegram_imports_without_httpx_cli_and_httpx_keeps_a_main() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["[]", "True"]
