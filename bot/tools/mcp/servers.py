"""MCP servers as tools: each server connected, its tools offered as `<server>__<tool>`, restarted if it dies."""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from bot.bus import Trust
from bot.config.schema_tools import MCPServerConfig
from bot.errors import ToolError, ToolUnavailable
from bot.tools.base import Tool, ToolContext, ToolRegistry
from bot.tools.chat_files import ChatFiles
from bot.tools.mcp.media import Media, deliver, media_of
from bot.tools.uploads import UploadLimits

logger = logging.getLogger(__name__)

STARTUP_WAIT = 10.0
"""How long `start` waits for a server's first tool list before going on without it."""
RESTART_DELAY = 1.0
MAX_RESTART_DELAY = 60.0


@asynccontextmanager
async def open_session(
    config: MCPServerConfig, lost: asyncio.Event, errlog: TextIO | None = None
) -> AsyncIterator[Any]:
    """An initialised ClientSession for one server; `lost` is set when its stream ends (a stdio server exited).

    A stdio server's stderr goes to `errlog`, by default the bot's own stderr.
    """
    import anyio
    from mcp import ClientSession

    async with _transport(config, errlog or sys.stderr) as (read, write):
        forward_in, forwarded = anyio.create_memory_object_stream[Any](0)

        async def relay() -> None:
            # The SDK does not say when a server's stream ends; this relay does, so the supervisor can restart it.
            try:
                async with forward_in:
                    async for item in read:
                        await forward_in.send(item)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass
            finally:
                lost.set()

        async with anyio.create_task_group() as group:
            group.start_soon(relay)
            try:
                async with ClientSession(forwarded, write) as session:
                    await session.initialize()
                    yield session
            finally:
                group.cancel_scope.cancel()


@asynccontextmanager
async def _transport(config: MCPServerConfig, errlog: TextIO) -> AsyncIterator[tuple[Any, Any]]:
    """The server's read and write streams: a child process (only the config's env) or streamable HTTP."""
    from mcp import StdioServerParameters, stdio_client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    if config.command is not None:
        server = StdioServerParameters(
            command=config.command, args=config.args, env=dict(config.env), cwd=str(config.cwd) if config.cwd else None
        )
        async with stdio_client(server, errlog) as streams:
            yield streams[0], streams[1]
    elif config.url is not None:
        async with (
            create_mcp_http_client(headers=dict(config.headers)) as client,
            streamable_http_client(config.url, http_client=client) as streams,
        ):
            yield streams[0], streams[1]
    else:
        raise ValueError("an MCP server needs a command or a url")


def result_text(result: Any) -> str:
    """The text the model reads from a CallToolResult: text parts joined, other parts named."""
    parts = []
    for block in result.content:
        text = getattr(block, "text", None)
        if text is not None:
            parts.append(text)
        elif block.type not in ("image", "audio", "resource"):  # those reach the chat as files (mcp_media)
            parts.append(f"[{block.type} content: {getattr(block, 'mime_type', '')}]")
    if not parts and result.structured_content is not None:
        import json

        parts.append(json.dumps(result.structured_content))
    return "\n".join(parts)


def offered_name(server: str, tool: str) -> str:
    """`<server>__<tool>`, made to fit the model APIs' rule for tool names (letters, digits, _ and -, at most 64)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}__{tool}")[:64]


class MCPTool(Tool):
    """One tool of an MCP server, named `<server>__<tool>`, calling through the server's live session."""

    def __init__(self, server: MCPServer, spec: Any) -> None:
        self.server = server
        self.remote_name = spec.name
        self.name = offered_name(server.name, spec.name)
        self.description = spec.description or f"{spec.name} from the {server.name} MCP server."
        self.parameters = spec.input_schema or {"type": "object", "properties": {}}
        self.min_trust = Trust(server.config.trust)
        self.read_only = bool(getattr(spec.annotations, "read_only_hint", False))  # the server's readOnlyHint

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        text, media = await self.server.call_with_media(self.remote_name, args)
        if media and self.server.workspace is not None:
            note = await deliver(
                media, self.server.workspace, ctx, self.server.name, self.server.uploads, self.server.files
            )
            return f"{text}\n{note}" if text else note
        return text


class MCPServer:
    """Keeps one MCP server connected: registers its tools while it is up, withdraws them and restarts it when not."""

    def __init__(
        self,
        name: str,
        config: MCPServerConfig,
        registry: ToolRegistry,
        restart_delay: float = RESTART_DELAY,
        max_restart_delay: float = MAX_RESTART_DELAY,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        workspace: Path | None = None,
        files: ChatFiles | None = None,
        uploads: UploadLimits | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.workspace = workspace  # where pictures and resources the tools return are saved (outbox/<chat>/)
        self.files = files  # where they are recorded as the chat's files
        self.uploads = uploads or UploadLimits()  # which chats they can be sent to (none unless told)
        self._registry = registry
        self._restart_delay = restart_delay
        self._max_restart_delay = max_restart_delay
        self._sleep = sleep
        self._session: Any = None
        self._lost = asyncio.Event()
        self._tools: list[str] = []
        self._ready = asyncio.Event()
        self._down = asyncio.Event()
        self._down.set()
        self._settled = asyncio.Event()  # the first connection attempt has succeeded or failed
        self._task: asyncio.Task[None] | None = None
        self.restarts = 0

    @property
    def tool_names(self) -> list[str]:
        """The names this server's tools are offered under now (empty while it is down)."""
        return list(self._tools)

    async def start(self, wait: float = STARTUP_WAIT) -> None:
        """Connect in the background; wait up to `wait` seconds for the first attempt to list the tools or fail (the
        SDK is imported before the wait starts)."""
        import mcp  # noqa: F401  (its import is ours to pay, not counted against the server's start)

        self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(self._settled.wait(), wait)
        except TimeoutError:
            logger.warning("MCP server %s is not up yet; its tools come when it is", self.name)

    async def stop(self) -> None:
        """Disconnect and stop restarting."""
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def wait_until_up(self) -> None:
        """Return once the server's tools are registered."""
        await self._ready.wait()

    async def wait_until_down(self) -> None:
        """Return once the server's tools are withdrawn."""
        await self._down.wait()

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        """Call a tool on the live session and return its text; failures become ToolError."""
        return (await self.call_with_media(tool, args))[0]

    async def call_with_media(self, tool: str, args: dict[str, Any]) -> tuple[str, list[Media]]:
        """Call a tool on the live session: its text and the files (images, resources) it returned."""
        session = self._session
        if session is None:
            raise ToolError(f"the {self.name} MCP server is not running right now; try again later.")
        try:
            async with asyncio.timeout(self.config.timeout):
                result = await session.call_tool(tool, args)
        except TimeoutError:
            raise ToolUnavailable(
                f"the {self.name} MCP server did not answer within {self.config.timeout:g}s."
            ) from None
        except Exception as exc:
            logger.warning("MCP server %s failed calling %s: %r", self.name, tool, exc)
            if self.config.url is not None:
                self._lost.set()  # an HTTP server's death shows only in a failed call
            raise ToolError(f"the {self.name} MCP server failed to run {tool}.") from exc
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or f"{tool} failed")
        return text, media_of(result)

    async def _supervise(self) -> None:
        delay = self._restart_delay
        while True:
            self._lost = asyncio.Event()
            try:
                async with open_session(self.config, self._lost) as session:
                    listing = await asyncio.wait_for(session.list_tools(), self.config.timeout)
                    self._register(session, listing.tools)
                    delay = self._restart_delay
                    await self._lost.wait()
                logger.warning("MCP server %s stopped; restarting in %gs", self.name, delay)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                logger.warning("MCP server %s failed: %r; restarting in %gs", self.name, root_cause(exc), delay)
            finally:
                self._withdraw()
                self._settled.set()
            await self._sleep(delay)
            delay = min(delay * 2, self._max_restart_delay)
            self.restarts += 1

    def _register(self, session: Any, specs: list[Any]) -> None:
        from jsonschema.exceptions import SchemaError

        tools = []
        for spec in specs:
            tool = MCPTool(self, spec)
            if tool.name in self._registry.names() and tool.name not in self._tools:
                logger.warning("MCP server %s: tool %s clashes with another tool; skipped", self.name, tool.name)
                continue
            try:
                self._registry.register(tool)
            except SchemaError as exc:
                logger.warning("MCP server %s: tool %s has an unusable schema (%s); skipped", self.name, spec.name, exc)
                continue
            tools.append(tool)
        self._tools = [tool.name for tool in tools]
        self._session = session
        self._down.clear()
        self._ready.set()
        self._settled.set()
        logger.info("MCP server %s up with %d tools", self.name, len(tools))

    def _withdraw(self) -> None:
        self._session = None
        for name in self._tools:
            self._registry.unregister(name)
        self._tools = []
        self._ready.clear()
        self._down.set()


def root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio wraps transport failures), for a readable log line."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class MCPServers:
    """Every configured MCP server, started together and stopped together."""

    def __init__(self, configs: dict[str, MCPServerConfig], registry: ToolRegistry, **options: Any) -> None:
        self.servers = {name: MCPServer(name, config, registry, **options) for name, config in configs.items()}

    async def start(self, wait: float = STARTUP_WAIT) -> None:
        """Start every server at once; a slow or broken one never holds up the rest longer than `wait`."""
        await asyncio.gather(*(server.start(wait) for server in self.servers.values()))

    async def stop(self) -> None:
        """Stop every server."""
        await asyncio.gather(*(server.stop() for server in self.servers.values()))


async def probe(config: MCPServerConfig, timeout: float = STARTUP_WAIT) -> list[str]:
    """Connect once and list the server's tool names within `timeout` (the server's time: the SDK is imported
    first); raises on failure."""
    import mcp  # noqa: F401  (a second of CPU on a loaded machine, which is no fault of the server's)

    with open(os.devnull, "w") as quiet:
        async with asyncio.timeout(timeout):
            async with open_session(config, asyncio.Event(), quiet) as session:
                return [tool.name for tool in (await session.list_tools()).tools]


def location(config: MCPServerConfig) -> str:
    """Where a server is: its URL, or its command line."""
    return config.url or " ".join([config.command or "", *config.args])


async def describe(config: MCPServerConfig, timeout: float = STARTUP_WAIT) -> tuple[bool, str]:
    """Probe once for `relaybot status` and `doctor`: whether it answered, and `<where>: N tools` or why not."""
    where = location(config)
    try:
        tools = await probe(config, timeout)
    except Exception as exc:
        return False, f"{where}: cannot start ({root_cause(exc)!r})"
    return True, f"{where}: {len(tools)} tool{'s' if len(tools) != 1 else ''}"
