"""Importing python-telegram-bot the channel's way leaves out httpx's command-line client (rich, pygments, click) and
Passport's cryptography, which both still import for whoever asks."""

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


CRYPTO_PROBE = """
import sys
from channels.telegram.library import without_passport_crypto
with without_passport_crypto():
    import telegram.ext
from telegram._passport.credentials import CRYPTO_INSTALLED
print("cryptography" in sys.modules, CRYPTO_INSTALLED)
from cryptography.hazmat.backends import default_backend
print(callable(default_backend))
"""


def test_telegram_imports_without_passport_crypto_which_still_imports_after() -> None:
    out = subprocess.run([sys.executable, "-c", CRYPTO_PROBE], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "True"]
