"""A real Synapse homeserver for the Matrix tests: its own venv (never the project's), SQLite, one per test session.

`.ci/run` builds the venv at `SYNAPSE_VENV` (`$RELAYBOT_SYNAPSE_VENV`, default `~/.cache/relaybot/synapse`);
where it is absent the Matrix tests are skipped with the reason, as the redis tests are.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from tests.support.polling import until_blocking

SYNAPSE_VENV = Path(os.environ.get("RELAYBOT_SYNAPSE_VENV", Path.home() / ".cache" / "relaybot" / "synapse"))
SERVER_NAME = "localhost"
START_TIMEOUT = 60.0
_RELAXED = {"per_second": 10_000, "burst_count": 10_000}
_names = itertools.count(1)


@dataclass(frozen=True, slots=True)
class MatrixUser:
    """A registered account: its full id, password and an access token of its own device."""

    user_id: str
    password: str
    access_token: str


def synapse_problem(venv: Path = SYNAPSE_VENV) -> str | None:
    """Why Synapse cannot run here, or None when it can."""
    python = venv / "bin" / "python"
    if not python.exists():
        return f"Synapse is not installed (bash .ci/run builds it in {venv}; or set RELAYBOT_SYNAPSE_VENV)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _signing_key() -> str:
    """A fresh ed25519 signing key in Synapse's file format (`ed25519 <version> <unpadded base64 seed>`)."""
    seed = base64.b64encode(os.urandom(32)).decode().rstrip("=")
    return f"ed25519 a_test {seed}\n"


def homeserver_config(folder: Path, port: int, shared_secret: str) -> dict[str, object]:
    """SQLite, loopback only, no federation, registration by shared secret only, rate limits out of the way."""
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(folder / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(folder / "homeserver.db")}},
        "log_config": str(folder / "log.yaml"),
        "media_store_path": str(folder / "media"),
        "signing_key_path": str(folder / "signing.key"),
        "registration_shared_secret": shared_secret,
        "enable_registration": False,
        "report_stats": False,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "federation_domain_whitelist": [],
        "url_preview_enabled": False,
        "presence": {"enabled": False},
        "enable_metrics": False,
        "bcrypt_rounds": 4,  # registration and login hash passwords: the default 12 rounds cost a second each
        "rc_message": _RELAXED,
        "rc_registration": _RELAXED,
        "rc_login": {"address": _RELAXED, "account": _RELAXED, "failed_attempts": _RELAXED},
        "rc_joins": {"local": _RELAXED, "remote": _RELAXED},
        "rc_joins_per_room": _RELAXED,
        "rc_invites": {"per_room": _RELAXED, "per_user": _RELAXED, "per_issuer": _RELAXED},
        "rc_admin_redaction": _RELAXED,
        "rc_media_create": _RELAXED,
        "rc_room_creation": _RELAXED,
        "rc_presence": {"per_user": _RELAXED},
    }


_LOG_CONFIG = """\
version: 1
formatters: {plain: {format: '%(asctime)s %(name)s %(levelname)s %(message)s'}}
handlers: {file: {class: logging.FileHandler, formatter: plain, filename: LOGFILE}}
root: {level: WARNING, handlers: [file]}
disable_existing_loggers: false
"""


class Synapse:
    """One Synapse process on 127.0.0.1 in `folder`; `start()` waits until it answers, `stop()` ends it."""

    def __init__(self, folder: Path, venv: Path = SYNAPSE_VENV) -> None:
        self.folder = folder
        self._venv = venv
        self._secret = secrets.token_hex(16)
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self.started_in = 0.0

    def start(self) -> None:
        """Write the config and key, start the homeserver and wait until its client API answers."""
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "signing.key").write_text(_signing_key())
        (self.folder / "log.yaml").write_text(_LOG_CONFIG.replace("LOGFILE", str(self.folder / "homeserver.log")))
        config = self.folder / "homeserver.yaml"
        config.write_text(json.dumps(homeserver_config(self.folder, self.port, self._secret)))
        begun = time.monotonic()
        python = str(self._venv / "bin" / "python")
        with (self.folder / "stderr.log").open("wb") as stderr:
            self._process = subprocess.Popen(
                [python, "-m", "synapse.app.homeserver", "--config-path", str(config)],
                cwd=self.folder,
                stdout=subprocess.DEVNULL,
                stderr=stderr,
            )
        try:
            until_blocking(self._started, START_TIMEOUT - (time.monotonic() - begun), interval=0.1)
        except TimeoutError:
            self.stop()
            log = (self.folder / "stderr.log").read_text()[-2000:]
            raise RuntimeError(f"Synapse did not start:\n{log}") from None
        self.started_in = time.monotonic() - begun

    def stop(self) -> None:
        """End the process and wait for it."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def register(self, prefix: str = "user", admin: bool = False, exact: bool = False) -> MatrixUser:
        """A new account (`@<prefix>-<n>:localhost`, or `@<prefix>:localhost` when `exact`) by the shared-secret
        HMAC flow of /_synapse/admin/v1/register."""
        localpart = prefix if exact else f"{prefix}-{next(_names)}-{secrets.token_hex(2)}"
        password = secrets.token_hex(8)
        nonce = self._request("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self._secret.encode(), digestmod=hashlib.sha1)
        mac.update(
            b"\x00".join([nonce.encode(), localpart.encode(), password.encode(), b"admin" if admin else b"notadmin"])
        )
        body = {"nonce": nonce, "username": localpart, "password": password, "admin": admin, "mac": mac.hexdigest()}
        answer = self._request("POST", "/_synapse/admin/v1/register", body)
        return MatrixUser(answer["user_id"], password, answer["access_token"])

    def _started(self) -> bool:
        """Whether Synapse answers; a process that has exited stops the wait at once."""
        if self._process is not None and self._process.poll() is not None:
            raise TimeoutError("Synapse exited")
        return self._answers()

    def _answers(self) -> bool:
        try:
            self._request("GET", "/_matrix/client/versions")
        except OSError:
            return False
        return True

    def _request(self, method: str, path: str, body: dict[str, object] | None = None) -> dict[str, str]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer: dict[str, str] = json.loads(reply.read())
            return answer
