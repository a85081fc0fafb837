"""python-telegram-bot imported without what relaybot never uses: the command-line client httpx loads beside itself,
and the cryptography Telegram Passport decrypts with."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

PASSPORT_CRYPTO = "cryptography.hazmat.backends"  # the first name telegram._passport imports, inside a try


def skip_httpx_cli() -> None:
    """Stand in for `httpx._main` before httpx is first imported, so importing telegram does not load rich, pygments
    and click (about 90 ms of CPU at launch); httpx then defines its own `main` that says the CLI is unavailable."""
    if "httpx" not in sys.modules:
        sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))


@contextmanager
def without_passport_crypto() -> Iterator[None]:
    """Within, `cryptography` reads as not installed to a first import of telegram, which then defines Passport
    decryption as unavailable instead of loading 35 modules (about 22 ms of CPU at launch); relaybot decrypts no
    Passport data. After it, cryptography imports as usual for whoever needs it."""
    if "telegram" in sys.modules or PASSPORT_CRYPTO in sys.modules:
        yield
        return
    sys.modules[PASSPORT_CRYPTO] = None  # type: ignore[assignment]  # None in sys.modules makes the import fail
    try:
        yield
    finally:
        if sys.modules.get(PASSPORT_CRYPTO, ...) is None:
            del sys.modules[PASSPORT_CRYPTO]
