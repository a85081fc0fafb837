"""A real Prosody on 127.0.0.1 for the XMPP tests: a generated config in a temp dir (plain c2s on loopback, a MUC
component that does not lock new rooms, HTTP file share for XEP-0363) and accounts made with prosodyctl."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.polling import until_blocking

DOMAIN, ROOMS, UPLOAD = "localhost", "rooms.localhost", "upload.localhost"
PASSWORD = "xmpp-pw"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prosody_problem() -> str | None:
    """Why Prosody cannot run here, or None."""
    if shutil.which("prosody") is None or shutil.which("prosodyctl") is None:
        return "prosody is not installed (Debian: prosody; .ci/run installs it)"
    return None


def _config(root: Path, c2s: int, http: int, upload: bool) -> str:
    share = (
        f'Component "{UPLOAD}" "http_file_share"\n'
        f'  http_host = "127.0.0.1"\n  http_external_url = "http://127.0.0.1:{http}/"\n'
        "  http_file_share_size_limit = 1048576\n"
        if upload
        else ""
    )
    return (
        f'run_as_root = true\npidfile = "{root}/prosody.pid"\ndata_path = "{root}/data"\n'
        'log = { { levels = { min = "warn" }, to = "console" } }\n'
        'interfaces = { "127.0.0.1" }\n'
        f"c2s_ports = {{ {c2s} }}\ns2s_ports = {{ }}\nc2s_direct_tls_ports = {{ }}\nlegacy_ssl_ports = {{ }}\n"
        f'http_ports = {{ {http} }}\nhttp_interfaces = {{ "127.0.0.1" }}\nhttps_ports = {{ }}\n'
        "c2s_require_encryption = false\nallow_unencrypted_plain_auth = true\n"
        'authentication = "internal_plain"\nuse_dns = false\n'
        'modules_enabled = { "roster", "saslauth", "disco", "ping", "carbons", "posix" }\n'
        f'VirtualHost "{DOMAIN}"\n'
        f'Component "{ROOMS}" "muc"\n  muc_room_locking = false\n  muc_room_default_public_jids = true\n'
        f"{share}"
    )


@dataclass
class ProsodyServer:
    """A running Prosody; `account(name)` makes name@localhost with `PASSWORD`."""

    port: int
    http_port: int
    process: subprocess.Popen[bytes]
    root: Path

    @classmethod
    def start(cls, upload: bool = True) -> ProsodyServer:
        """Start one in a fresh temp dir; skip when Prosody is not installed."""
        if (problem := prosody_problem()) is not None:
            pytest.skip(problem)
        root = Path(tempfile.mkdtemp(prefix="relaybot-prosody-"))
        (root / "data").mkdir()
        port, http_port = _free_port(), _free_port()
        (root / "prosody.cfg.lua").write_text(_config(root, port, http_port, upload))
        command = ["prosody", "--config", str(root / "prosody.cfg.lua"), "-F"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        server = cls(port, http_port, process, root)
        try:
            until_blocking(server._listens, 15)
        except BaseException:
            server.stop()
            raise
        return server

    def restart(self) -> None:
        """Stop the server and start it again on the same ports and data, as an operator's restart does."""
        self.process.terminate()
        self.process.wait(10)
        command = ["prosody", "--config", str(self.root / "prosody.cfg.lua"), "-F"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        until_blocking(self._listens, 15)

    def account(self, name: str) -> str:
        """Register name@localhost (password `PASSWORD`) and return its JID."""
        config = str(self.root / "prosody.cfg.lua")
        subprocess.run(
            ["prosodyctl", "--config", config, "register", name, DOMAIN, PASSWORD], check=True, capture_output=True
        )
        return f"{name}@{DOMAIN}"

    def _listens(self) -> bool:
        if self.process.poll() is not None:
            error = self.process.stderr.read() if self.process.stderr else b""
            raise RuntimeError(f"prosody exited: {error[-800:]!r}")
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
