"""A local control socket, so CLI commands reach a running gateway without a restart."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from bot.errors import GatewayUnreachable

logger = logging.getLogger(__name__)

Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class ControlServer:
    """Answers one JSON request per connection on a Unix socket owned by the bot's user."""

    def __init__(self, path: Path, handlers: Mapping[str, Handler]) -> None:
        self._path = path
        self._handlers = handlers
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.unlink(missing_ok=True)
        self._server = await asyncio.start_unix_server(self._serve, path=str(self._path))
        self._path.chmod(0o600)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self._path.unlink(missing_ok=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = json.loads(await reader.readline())
            handler = self._handlers.get(str(request.get("op")))
            reply = await handler(request) if handler else {"ok": False, "error": f"unknown op {request.get('op')!r}"}
        except Exception as exc:
            logger.exception("control request failed")
            reply = {"ok": False, "error": type(exc).__name__}
        writer.write(json.dumps(reply).encode() + b"\n")
        await writer.drain()
        writer.close()


def send_control(path: Path, request: dict[str, Any], timeout: float = 10.0) -> dict[str, Any] | None:
    """Send one request to a running gateway; None when none is listening, GatewayUnreachable when it is slow."""
    if not path.exists():
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError):
            return None  # a socket file left behind by a gateway that is gone
        try:
            sock.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        except TimeoutError:
            raise GatewayUnreachable(f"the gateway did not answer within {timeout:.0f}s") from None
        except OSError as exc:
            raise GatewayUnreachable(f"the gateway dropped the request ({exc.strerror or exc})") from None
    try:
        return json.loads(data)
    except ValueError:
        raise GatewayUnreachable("the gateway closed the connection without an answer") from None
