"""A server the tests run as a child process on 127.0.0.1 (ngircd, Prosody): is it listening yet, and stopping it."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path


def listening(process: subprocess.Popen[bytes], port: int, name: str) -> bool:
    """Whether the server accepts connections on `port`; a server that exited stops the wait with its stderr."""
    if process.poll() is not None:
        error = process.stderr.read() if process.stderr else b""
        raise RuntimeError(f"{name} exited: {error[-800:]!r}")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_server(process: subprocess.Popen[bytes], root: Path) -> None:
    """Stop the server (killed if it lingers past 10 s) and remove its files."""
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)
    shutil.rmtree(root, ignore_errors=True)
