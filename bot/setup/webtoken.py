"""`relaybot init` writes a fresh API token into a new config, so the web chat works once switched on."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

from bot.storage.private_file import write_private

PLACEHOLDER = '"${RELAYBOT_API_TOKEN:-}"'


def write_api_token(config_file: Path, make_token: Callable[[], str] = lambda: secrets.token_urlsafe(32)) -> str | None:
    """Replace the example's API token placeholder with a new token; None when there is no placeholder."""
    text = config_file.read_text()
    if PLACEHOLDER not in text:
        return None
    token = make_token()
    write_private(config_file, text.replace(PLACEHOLDER, f'"{token}"', 1))
    return token


def chat_url(host: str, port: int) -> str:
    """The web chat's address; the token goes into its login form, never into a URL."""
    return f"http://{host}:{port}/"
