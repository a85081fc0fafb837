"""Shared fixtures: a loopback-only network guard for every test, the fake LLM server and the fake platforms."""

import ipaddress
import os
import shutil
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from bot.tools.sandbox.exec_sandbox import bwrap_problem
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeLLM
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.support.gateway import SLACK_OWNER

pytest_plugins = [
    "tests.support.redis_server",  # `redis_url`
    "tests.support.index_homes",  # `index_home`
    "tests.support.mail_servers",  # `dovecot`, `smtp_sink`
    "tests.support.matrix_fixtures",  # `synapse`, `matrix_world`
    "tests.support.ngircd",  # `ngircd`, `throttling_ngircd`
]

# Before any test imports litellm (lazily, through bot.llm): otherwise it downloads the price map at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_LOOPBACK_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})


def _is_loopback_host(host: object) -> bool:
    """True for loopback literals (127.0.0.0/8, ::1, v4-mapped) and the name localhost."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return (mapped or address).is_loopback


def _refuse(target: object) -> RuntimeError:
    return RuntimeError(f"test tried to reach {target!r} beyond loopback")


@pytest.fixture(autouse=True)
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection or name lookup beyond loopback raise RuntimeError."""
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family == socket.AF_UNIX:
            return
        if sock.family in (socket.AF_INET, socket.AF_INET6) and _is_loopback_host(address[0]):
            return
        raise _refuse(address)

    # asyncio's sock_connect (under create_connection, httpx, aiohttp) calls sock.connect, so it lands here.
    def connect(self: socket.socket, address: Any) -> None:
        check(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        check(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host is not None and not _is_loopback_host(host):
            raise _refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    _guard_native_clients(monkeypatch)
    _resolve_through_socket(monkeypatch)


def _resolve_through_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    """aiohttp resolves with aiodns (c-ares, which never calls Python's socket) once slixmpp brings it: make it
    resolve with getaddrinfo, which the guard checks."""
    from aiohttp import connector, resolver

    monkeypatch.setattr(connector, "DefaultResolver", resolver.ThreadedResolver)


def _guard_native_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP clients written in Rust (ddgs's primp) never call Python's socket: check their URL before they go."""
    from urllib.parse import urlsplit

    from ddgs.http_client import HttpClient

    real_request = HttpClient.request

    def request(self: HttpClient, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if not _is_loopback_host(urlsplit(url).hostname):
            raise _refuse(url)
        return real_request(self, method, url, *args, **kwargs)

    monkeypatch.setattr(HttpClient, "request", request)


@pytest_asyncio.fixture
async def fake_llm() -> AsyncIterator[FakeLLM]:
    """A started fake OpenAI-compatible server; point litellm at `fake_llm.base_url`."""
    async with FakeLLM() as fake:
        yield fake


@pytest_asyncio.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    """A started fake Telegram Bot API."""
    async with FakeTelegram() as fake:
        yield fake


@pytest_asyncio.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    """A started fake Discord API and gateway."""
    async with FakeDiscord() as fake:
        yield fake


@pytest_asyncio.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    """A started fake Slack Web API and Socket Mode that knows the owner's name."""
    async with FakeSlack() as fake:
        fake.users[SLACK_OWNER] = "Olive Owner"
        yield fake


@pytest.fixture(scope="session")
def bwrap() -> str:
    """A bwrap that can build a sandbox here; the test is skipped, with the reason, where none can."""
    found = shutil.which("bwrap")
    if found is None:
        pytest.skip("bwrap is not installed (Debian package bubblewrap)")
    if problem := bwrap_problem(found):
        pytest.skip(problem)
    return found
