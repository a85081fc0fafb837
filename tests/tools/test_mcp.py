"""MCP servers as tools: a real SDK server over stdio and streamable HTTP, driven by the fake LLM's tool calls."""

import asyncio
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.bus import Trust
from bot.config.schema_tools import MCPServerConfig
from bot.tools.base import ToolRegistry
from bot.tools.mcp.servers import MCPServer, probe
from tests.fakes.mcp_http import FakeMCPHttp
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness
from tests.support.model_requests import tool_names

REPO = Path(__file__).resolve().parents[2]
STDIO = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server"], "cwd": str(REPO)}
UP_CEILING = 60.0  # a generous bound on a start the server signals: a loaded machine may pass STARTUP_WAIT


async def up(server: MCPServer) -> None:
    """Return once the server's tools are registered; fail, never hang, if that takes longer than UP_CEILING."""
    await asyncio.wait_for(server.wait_until_up(), UP_CEILING)


def tool_answers(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


async def test_owner_sees_and_calls_an_mcp_tool_a_guest_does_not_and_errors_reach_the_model(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers={"calc": STDIO}) as bot:
        await up(bot.app.mcp.servers["calc"])
        fake.script(ToolCalls((("calc__add", {"a": 2, "b": 40}),)), Text("It is 42."))
        assert await bot.ask("what is 2+40?") == "It is 42."
        assert {"calc__add", "calc__getenv", "calc__pid"} <= set(tool_names(fake.requests[0]))
        assert tool_answers(fake.requests[1]) == ["42"]
        await bot.ask("hello", chat="test:guest", sender="g1", trust=Trust.GUEST)
        assert not [name for name in tool_names(fake.requests[2]) if name.startswith("calc__")]
        fake.script(ToolCalls((("calc__fail", {}),)), Text("That failed."))
        await bot.ask("try the failing one")
        assert "failed on purpose" in tool_answers(fake.requests[4])[-1]


async def test_an_mcp_tool_that_returns_nothing_gives_the_model_empty_and_read_only_hints_are_kept(
    tmp_path: Path,
) -> None:
    cut = '{"text": "half a sent'
    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers={"calc": STDIO}) as bot:
        await up(bot.app.mcp.servers["calc"])
        fake.script(
            ToolCalls((("calc__nothing", {}), ("calc__echo", cut), ("calc__getenv", '{"name": "HO'))), Text("ok")
        )
        await bot.ask("go")
    empty, echoed, refused = tool_answers(fake.requests[1])
    assert empty == "(empty)" and echoed == "half a sent"
    assert "arrived cut off or malformed" in refused


async def test_guest_trust_server_is_offered_to_guests(tmp_path: Path) -> None:
    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers={"calc": {**STDIO, "trust": "guest"}}) as bot:
        await up(bot.app.mcp.servers["calc"])
        await bot.ask("hello", sender="g1", trust=Trust.GUEST)
        assert "calc__add" in tool_names(fake.requests[0])


async def test_stdio_server_gets_only_the_environment_its_config_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAYBOT_TEST_SECRET", "sk-do-not-leak")
    registry = ToolRegistry()
    server = MCPServer("calc", MCPServerConfig(**STDIO, env={"GREETING": "hi"}), registry)
    await server.start()
    try:
        await up(server)
        assert await server.call("getenv", {"name": "GREETING"}) == "hi"
        assert await server.call("getenv", {"name": "RELAYBOT_TEST_SECRET"}) == "unset"
    finally:
        await server.stop()


async def test_killed_server_withdraws_its_tools_and_they_return_after_restart() -> None:
    registry = ToolRegistry()
    server = MCPServer("calc", MCPServerConfig(**STDIO), registry, restart_delay=0.05)
    await server.start()
    try:
        await up(server)
        first = int(await server.call("pid", {}))
        os.kill(first, signal.SIGKILL)
        await asyncio.wait_for(server.wait_until_down(), UP_CEILING)
        assert not [name for name in registry.names() if name.startswith("calc__")]
        await up(server)
        assert "calc__add" in registry.names()
        assert int(await server.call("pid", {})) != first
    finally:
        await server.stop()
    assert registry.names() == []


async def test_server_that_cannot_start_leaves_the_bot_answering(tmp_path: Path) -> None:
    broken = {"command": str(tmp_path / "no-such-server")}
    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers={"broken": broken}) as bot:
        assert (await bot.ask("hello")).endswith("hello")
        assert not [name for name in tool_names(fake.requests[0]) if name.startswith("broken__")]
        assert bot.app.mcp.servers["broken"].tool_names == []


@pytest_asyncio.fixture
async def http_server() -> AsyncIterator[str]:
    """The fake MCP server over streamable HTTP, served in the test's loop; yields its URL."""
    async with FakeMCPHttp() as server:
        yield server.url


async def test_streamable_http_server_tools_are_called(tmp_path: Path, http_server: str) -> None:
    servers = {"web": {"url": http_server, "headers": {"Authorization": "Bearer t"}}}
    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers=servers) as bot:
        fake.script(ToolCalls((("web__add", {"a": 1, "b": 2}), ("web__header", {"name": "Authorization"}))), Text("3"))
        await bot.ask("1+2?")
        assert tool_answers(fake.requests[1]) == ["3", "Bearer t"]
    assert "add" in await probe(MCPServerConfig(url=http_server))


def test_offered_names_fit_the_model_apis_rule() -> None:
    from bot.tools.mcp.servers import offered_name

    assert offered_name("calc", "add") == "calc__add"
    assert offered_name("fs", "read.file/v2") == "fs__read_file_v2"
    assert len(offered_name("s" * 30, "t" * 60)) == 64


async def test_pictures_and_resources_a_tool_returns_reach_the_chat_as_files(tmp_path: Path) -> None:
    from tests.fakes.mcp_server import PNG_PIXEL

    async with FakeLLM() as fake, Harness(tmp_path, fake, mcp_servers={"calc": STDIO}) as bot:
        await up(bot.app.mcp.servers["calc"])
        fake.script(ToolCalls((("calc__chart", {}),)), Text("Sent."))
        assert await bot.ask("chart please", chat="telegram:5", sender="5") == "Sent."
        (sent,) = [message for message in bot.outbox if message.files]
    picture, table = sent.files
    assert (picture.kind, picture.mime_type, Path(picture.path).read_bytes()) == ("image", "image/png", PNG_PIXEL)
    assert (table.kind, table.mime_type, Path(table.path).read_bytes()) == ("file", "text/csv", b"a,b\n1,2\n")
    assert Path(table.path).parent == bot.config.workspace / "outbox" / "telegram" / "5"
    (answer,) = tool_answers(fake.requests[1])
    assert answer.startswith("Here is the chart.\n[the tool returned 2 file(s), sent to this chat and saved as outbox/")
    assert re.search(r"\(file ids f_[0-9a-f]{8}, f_[0-9a-f]{8}\)\]$", answer)
