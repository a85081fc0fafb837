"""A real redis-server for tests: a free port, a temp dir, no persistence; skipped where it is not installed."""

from __future__ import annotations

import os
import selectors
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

START_CEILING = 30.0  # seconds: it is up in milliseconds, but a loaded machine may take seconds to run it at all


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _started(binary: str, directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A redis-server on a free port, once its log says it accepts connections; another port when a process took
    this one first (other suites run on the machine) and it exited."""
    for _ in range(3):
        port = _free_port()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory), "--logfile", ""]
        process = subprocess.Popen(
            [*args, "--save", "", "--appendonly", "no"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        assert process.stdout is not None
        if _ready(process.stdout, time.monotonic() + START_CEILING, process):
            process.stdout.close()  # the log goes on into a closed pipe: redis ignores SIGPIPE
            return process, port
        process.wait(START_CEILING)
    raise RuntimeError("redis-server did not start: it exited three times (its port taken?)")


def _ready(log: IO[bytes], deadline: float, process: subprocess.Popen[bytes]) -> bool:
    """Whether the server's log said it accepts connections; False when it exited first. The pipe is waited on (no
    polling) and read unbuffered, so no line sits unseen in a buffer; past `deadline` the server is killed."""
    said = b""
    with selectors.DefaultSelector() as selector:
        selector.register(log, selectors.EVENT_READ)
        while selector.select(max(0.0, deadline - time.monotonic())):
            chunk = os.read(log.fileno(), 4096)
            if not chunk:
                return False
            said = said[-64:] + chunk
            if b"Ready to accept connections" in said:
                return True
    process.kill()
    raise RuntimeError(f"redis-server did not start within {START_CEILING:g}s")


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """The URL of a fresh redis-server, stopped after the test."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    process, port = _started(binary, tmp_path)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(START_CEILING)
