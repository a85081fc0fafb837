"""The control socket: one JSON request and one answer per connection, and a client that never hangs."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.errors import GatewayUnreachable
from bot.ops.control import ControlServer, send_control


async def echo(request: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "echo": request.get("value")}


async def broken(request: dict[str, Any]) -> dict[str, Any]:
    raise ValueError("secret detail")


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[Path]:
    path = tmp_path / "control.sock"
    control = ControlServer(path, {"echo": echo, "broken": broken})
    await control.start()
    yield path
    await control.stop()
    assert not path.exists()


async def ask(path: Path, request: dict[str, Any], timeout: float = 5.0) -> dict[str, Any] | None:
    return await asyncio.to_thread(send_control, path, request, timeout)


async def test_a_request_gets_its_handlers_answer(server: Path) -> None:
    assert await ask(server, {"op": "echo", "value": [1, "two"]}) == {"ok": True, "echo": [1, "two"]}
    assert os.stat(server).st_mode & 0o777 == 0o600


async def test_an_unknown_command_is_answered_not_ok(server: Path) -> None:
    assert await ask(server, {"op": "reboot"}) == {"ok": False, "error": "unknown op 'reboot'"}


async def test_a_failing_handler_answers_with_the_error_type_only(server: Path) -> None:
    assert await ask(server, {"op": "broken"}) == {"ok": False, "error": "ValueError"}


def test_no_socket_means_no_gateway(tmp_path: Path) -> None:
    assert send_control(tmp_path / "control.sock", {"op": "status"}) is None


def test_a_socket_left_behind_by_a_gone_gateway_means_no_gateway(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stale:
        stale.bind(str(path))  # bound, never listening: connecting is refused
    assert send_control(path, {"op": "status"}) is None


def listener(path: Path, answer: bytes | None) -> socket.socket:
    """A socket that accepts one connection, then closes it (after `answer`, if given) or leaves it silent."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(1)

    def serve() -> None:
        conn, _ = sock.accept()
        conn.recv(65536)
        if answer is None:
            threading.Event().wait(2)  # silent past the client's timeout
        else:
            conn.sendall(answer)
        conn.close()

    threading.Thread(target=serve, daemon=True).start()
    return sock


def test_a_connection_closed_without_an_answer_is_unreachable(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with listener(path, b""), pytest.raises(GatewayUnreachable, match="closed the connection without an answer"):
        send_control(path, {"op": "status"})


def test_a_silent_gateway_is_unreachable_after_the_timeout(tmp_path: Path) -> None:
    path = tmp_path / "control.sock"
    with listener(path, None), pytest.raises(GatewayUnreachable, match="did not answer within 0s"):
        send_control(path, {"op": "status"}, timeout=0.2)
