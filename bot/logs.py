"""Logging setup: one line per event, to stderr and/or a rotating file, with every configured secret masked."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TextIO

LOG_LEVELS = ("trace", "debug", "info", "warning", "error")
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
FILE_BYTES = 5 * 1024 * 1024
FILE_BACKUPS = 3
# Libraries whose debug output carries request bodies (users' texts, keys in history) or floods the log.
THIRD_PARTY = (
    "LiteLLM",
    "LiteLLM Router",
    "LiteLLM Proxy",
    "litellm",
    "openai",
    "httpx",
    "httpx2",  # the MCP SDK 2.x's HTTP client: an INFO line per MCP request otherwise
    "httpcore",
    "aiohttp",
    "discord",
    "slack_bolt",
    "slack_sdk",
    "apscheduler",
    "mcp",
    "websockets",
    "asyncio",
)


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function masking these secret values (tokens, keys) as `***` in any text, as the log does: for error
    texts shown elsewhere (`relaybot status`, the dashboard, dead letters)."""
    ordered = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def redact(text: str) -> str:
        for secret in ordered:
            text = text.replace(secret, "***")
        return text

    return redact


class RedactSecrets(logging.Filter):
    """Replaces secret values (tokens, keys) in a record's final message with `***`."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self._redact = redactor(secrets)

    def filter(self, record: logging.LogRecord) -> bool:
        if record.__dict__.get("_redacted_by") is self:
            return True  # each handler asks; the message is read once
        record.__dict__["_redacted_by"] = self
        message = record.getMessage()
        redacted = self._redact(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        return True


class OnceFormatter(logging.Formatter):
    """Formats a record once for every handler that shares it (the file handler's size check formats it too)."""

    def format(self, record: logging.LogRecord) -> str:
        done = record.__dict__.get("_formatted")
        if done is not None and done[0] is self:
            return str(done[1])
        text = super().format(record)
        record.__dict__["_formatted"] = (self, text)
        return text


class RotatingLog(logging.handlers.RotatingFileHandler):
    """A rotating file whose size check per line stats nothing: the file is relaybot's own regular file (the
    standard handler stats its path twice per line to allow for a device or a pipe)."""

    def shouldRollover(self, record: logging.LogRecord) -> int:
        if self.stream is None:
            self.stream = self._open()
        if self.maxBytes <= 0:
            return 0
        self.stream.seek(0, 2)  # another process may have written meanwhile
        return int(self.stream.tell() + len(f"{self.format(record)}\n") >= self.maxBytes)


class CurrentStderr(logging.StreamHandler[TextIO]):
    """Writes to whatever `sys.stderr` is when a record arrives, so a swapped stderr is followed."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        pass


def log_dir(state_dir: Path) -> Path:
    """Where relaybot writes its log files."""
    return state_dir / "logs"


def third_party_level(level: str) -> int:
    """Libraries stay at WARNING, at INFO while ours debug, and reach DEBUG only with `trace`."""
    if level == "trace":
        return logging.DEBUG
    return logging.INFO if level == "debug" else max(logging.WARNING, logging.getLevelName(level.upper()))


def setup_logging(
    level: str,
    secrets: Iterable[str] = (),
    file: Path | None = None,
    stderr: bool = True,
    file_bytes: int = FILE_BYTES,
) -> None:
    """Log at `level` to stderr and/or a `file` rotated at `file_bytes`; libraries stay quiet; secrets never print."""
    handlers: list[logging.Handler] = []
    if stderr:
        handlers.append(CurrentStderr())
    if file is not None:
        file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handlers.append(RotatingLog(file, maxBytes=file_bytes, backupCount=FILE_BACKUPS, encoding="utf-8"))
        file.chmod(0o600)
    redact = RedactSecrets(secrets)
    formatter = OnceFormatter(FORMAT)
    for handler in handlers:
        handler.setFormatter(formatter)
        handler.addFilter(redact)
    root = logging.getLogger()
    root.handlers[:] = handlers or [logging.NullHandler()]
    set_level(level)


def set_level(level: str) -> None:
    """Log ours at `level` from now on; libraries as `third_party_level` says."""
    logging.getLogger().setLevel(logging.DEBUG if level == "trace" else level.upper())
    for name in THIRD_PARTY:
        logging.getLogger(name).setLevel(third_party_level(level))
    # python-telegram-bot logs a traceback per failed poll; the adapter logs one line instead.
    logging.getLogger("telegram").setLevel(logging.DEBUG if level == "trace" else logging.CRITICAL)


def adopt_library_loggers() -> None:
    """Drop the stderr handlers litellm attaches at import: its lines reach ours once, through the root."""
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        library = logging.getLogger(name)
        for handler in list(library.handlers):
            library.removeHandler(handler)
        library.propagate = True


def last_lines(path: Path, count: int) -> list[str]:
    """The last `count` lines of a log file."""
    with path.open(encoding="utf-8", errors="replace") as file:
        return list(deque(file, maxlen=count))


def follow_lines(path: Path, poll: float = 0.5, sleep: Callable[[float], None] = time.sleep) -> Iterator[str]:
    """Lines appended to a log file from now on, across rotations, as `tail -F` reads them."""
    file = path.open(encoding="utf-8", errors="replace")
    file.seek(0, 2)
    inode = path.stat().st_ino
    try:
        while True:
            line = file.readline()
            if line:
                yield line
                continue
            if path.exists() and path.stat().st_ino != inode:
                file.close()
                file = path.open(encoding="utf-8", errors="replace")
                inode = path.stat().st_ino
                continue
            sleep(poll)
    finally:
        file.close()
