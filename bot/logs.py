"""Logging setup: one line per event on stderr, with every configured secret masked."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

QUIET_LIBRARIES = ("LiteLLM", "litellm", "httpx", "httpcore", "discord", "slack_bolt", "slack_sdk", "apscheduler")


class RedactSecrets(logging.Filter):
    """Replaces secret values (tokens, keys) in a record's final message with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = message
        for secret in self._secrets:
            redacted = redacted.replace(secret, "***")
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


def setup_logging(level: str, secrets: Iterable[str] = ()) -> None:
    """Log to stderr at `level`; libraries stay at warnings unless debugging; secrets never print."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    if level != "debug":
        for name in QUIET_LIBRARIES:
            logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLevelName(level.upper())))
        # python-telegram-bot logs a traceback per failed poll; the adapter logs one line instead.
        logging.getLogger("telegram").setLevel(logging.CRITICAL)
