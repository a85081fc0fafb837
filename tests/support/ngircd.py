"""A real ngircd on 127.0.0.1 for the IRC tests: a generated config in a temp dir, one predefined channel, and the
server's flood penalties on or off (`MaxPenaltyTime = 0` turns them off, ngircd.conf(5))."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.polling import until_blocking

SERVER_NAME = "irc.relaybot.test"
ROOM = "#relay"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ngircd_problem() -> str | None:
    """Why ngircd cannot run here, or None."""
    if _binary() is None:
        return "ngircd is not installed (Debian: ngircd; .ci/run installs it)"
    return None


def _binary() -> str | None:
    return shutil.which("ngircd") or ("/usr/sbin/ngircd" if Path("/usr/sbin/ngircd").exists() else None)


def _config(port: int, penalties: bool) -> str:
    return (
        "[Global]\n"
        f"Name = {SERVER_NAME}\nInfo = relaybot test server\nListen = 127.0.0.1\nPorts = {port}\n"
        "MotdPhrase = relaybot tests\nAdminInfo1 = tests\nAdminInfo2 = loopback\nAdminEMail = nobody@relaybot.test\n"
        "[Limits]\nMaxConnectionsIP = 0\nPingTimeout = 300\nPongTimeout = 60\n"
        f"MaxPenaltyTime = {-1 if penalties else 0}\n"
        "[Options]\nDNS = no\nIdent = no\nPAM = no\n"
        f"[Channel]\nName = {ROOM}\nModes = +n\n"
    )


@dataclass
class NgircdServer:
    """A running ngircd; `penalties` says whether it throttles clients that send faster than it reads."""

    port: int
    process: subprocess.Popen[bytes]
    root: Path
    penalties: bool

    @classmethod
    def start(cls, penalties: bool = False) -> NgircdServer:
        """Start one in a fresh temp dir; skip when ngircd is not installed."""
        if (problem := ngircd_problem()) is not None:
            pytest.skip(problem)
        root = Path(tempfile.mkdtemp(prefix="relaybot-ngircd-"))
        port = _free_port()
        (root / "ngircd.conf").write_text(_config(port, penalties))
        command = [str(_binary()), "--nodaemon", "--config", str(root / "ngircd.conf")]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        server = cls(port, process, root, penalties)
        try:
            until_blocking(server._greets, 10)
        except BaseException:
            server.stop()
            raise
        return server

    def _greets(self) -> bool:
        if self.process.poll() is not None:
            error = self.process.stderr.read() if self.process.stderr else b""
            raise RuntimeError(f"ngircd exited: {error[-500:]!r}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server and remove its files."""
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="session")
def ngircd() -> Iterator[NgircdServer]:
    """One ngircd without flood penalties, shared by the IRC tests of the session (each test uses its own nicks)."""
    server = NgircdServer.start(penalties=False)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def throttling_ngircd() -> Iterator[NgircdServer]:
    """An ngircd with its default flood penalties (three commands or 256 bytes a second per client)."""
    server = NgircdServer.start(penalties=True)
    try:
        yield server
    finally:
        server.stop()
