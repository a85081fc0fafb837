"""A small MCP server built with the SDK's MCPServer: stdio by default, streamable HTTP with `--http PORT`."""

from __future__ import annotations

import argparse
import base64
import os

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import BlobResourceContents, ContentBlock, EmbeddedResource, ImageContent, TextContent, ToolAnnotations

server = MCPServer("fake")
PNG_PIXEL = base64.b64decode(  # a 1x1 PNG (the same picture as the fake OpenAI server's)
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable in the server's process, or 'unset'."""
    return os.environ.get(name, "unset")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of an HTTP request header (streamable HTTP only), or 'unset'."""
    return (ctx.headers or {}).get(name.lower(), "unset")


@server.tool()
def pid() -> str:
    """The server's process id (tests kill it to prove restarts)."""
    return str(os.getpid())


@server.tool()
def fail() -> str:
    """Always fails, so tests see a tool error reach the model."""
    raise ToolError("the fake tool failed on purpose")


@server.tool()
def nothing() -> str:
    """Answers with no text at all."""
    return ""


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def echo(text: str) -> str:
    """Says `text` back; marked read-only."""
    return text


@server.tool()
def chart() -> list[ContentBlock]:
    """A caption, a 1x1 PNG picture and a CSV file as an embedded resource."""
    csv = BlobResourceContents(uri="file:///data/report.csv", mime_type="text/csv", blob=_b64(b"a,b\n1,2\n"))
    return [
        TextContent(type="text", text="Here is the chart."),
        ImageContent(type="image", data=_b64(PNG_PIXEL), mime_type="image/png"),
        EmbeddedResource(type="resource", resource=csv),
    ]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--http", type=int, help="serve streamable HTTP on 127.0.0.1:PORT/mcp instead of stdio")
    args = parser.parse_args(argv)
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
