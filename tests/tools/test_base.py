"""The registry's second try: a read-only tool that failed on something passing runs once more, others never."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp import web

from bot.errors import ToolError, ToolUnavailable
from bot.llm.types import ToolCall
from bot.tools.base import Tool, ToolContext, ToolRegistry
from bot.tools.fetch.page import WebFetchTool
from tests.fakes.loopback import LoopbackSite


class Flaky(Tool):
    """Fails with each of `failures` in turn, then answers."""

    description = "Look something up."
    parameters = {"type": "object", "properties": {}}

    def __init__(self, name: str, read_only: bool, *failures: ToolError) -> None:
        self.name = name
        self.read_only = read_only
        self.failures = list(failures)
        self.runs = 0

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        self.runs += 1
        if self.failures:
            raise self.failures.pop(0)
        return "found"


async def run_once(tool: Tool, ctx: ToolContext) -> tuple[str, bool]:
    result = await ToolRegistry([tool]).execute(ToolCall("c1", tool.name, {}), ctx)
    return result.content, result.is_error


async def test_a_read_only_tool_that_failed_on_something_passing_is_tried_once_more(ctx: ToolContext) -> None:
    lookup = Flaky("lookup", True, ToolUnavailable("HTTP 503"))
    assert await run_once(lookup, ctx) == ("found", False) and lookup.runs == 2


async def test_the_second_failure_reaches_the_model(ctx: ToolContext) -> None:
    lookup = Flaky("lookup", True, ToolUnavailable("HTTP 503"), ToolUnavailable("HTTP 502"))
    assert await run_once(lookup, ctx) == ("Error: HTTP 502", True) and lookup.runs == 2


async def test_a_side_effecting_tool_is_never_retried_blindly(ctx: ToolContext) -> None:
    write = Flaky("write", False, ToolUnavailable("connection reset"))
    assert await run_once(write, ctx) == ("Error: connection reset", True) and write.runs == 1


async def test_a_lasting_failure_is_not_retried(ctx: ToolContext) -> None:
    lookup = Flaky("lookup", True, ToolError("HTTP 404"))
    assert await run_once(lookup, ctx) == ("Error: HTTP 404", True) and lookup.runs == 1


@pytest.mark.parametrize(("status", "kind"), [(503, ToolUnavailable), (500, ToolUnavailable), (404, ToolError)])
async def test_web_fetch_counts_5xx_as_passing(ctx: ToolContext, status: int, kind: type[ToolError]) -> None:
    answers = [status, 200]

    async def page(request: web.Request) -> web.Response:
        return web.Response(status=answers.pop(0), text="the page", content_type="text/plain")

    app = web.Application()
    app.router.add_get("/", page)
    site = LoopbackSite(app)
    port = await site.start()
    try:
        fetch = WebFetchTool(lambda address: True)  # the test server is on loopback
        result = await ToolRegistry([fetch]).execute(
            ToolCall("c1", "web_fetch", {"url": f"http://127.0.0.1:{port}/"}), ctx
        )
    finally:
        await site.stop()
    assert result.is_error is (kind is ToolError)
    assert ("the page" in result.content) is (kind is ToolUnavailable)
