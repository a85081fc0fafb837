"""A real redis-server for tests: a free port, a temp dir, no persistence; skipped where it is not installed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

START_CEILING = 30.0  # seconds: it is up in milliseconds, but a loaded machine may take seconds to run it at all


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _started(binary: str, directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A redis-server on a free port, once it accepts connections; another port when a process took this one first
    (other suites run on the machine) and it exited."""
    for _ in range(3):
        port = _free_port()
        args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
        process = subprocess.Popen(
            [*args, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + START_CEILING
        while process.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.1).close()
                return process, port
            except OSError:
                if time.monotonic() > deadline:
                    process.kill()
                    raise RuntimeError(f"redis-server did not start within {START_CEILING:g}s") from None
                time.sleep(0.02)
    raise RuntimeError("redis-server did not start: it exited three times (its port taken?)")


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
