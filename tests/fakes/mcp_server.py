"""A fake MCP server speaking the protocol's JSON-RPC (the 2025-11-25 handshake) with the standard library alone, so a
child process is ready in milliseconds: `python -m tests.fakes.mcp_server` serves stdio; `mcp_http` serves it over
streamable HTTP. (The SDK's own server took over a second of CPU to import: seven under a loaded CI, against the
ten-second start the bot allows.)"""

from __future__ import annotations

import base64
import json
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any

PROTOCOL_VERSION = "2025-11-25"
PNG_PIXEL = base64.b64decode(  # a 1x1 PNG (the same picture as the fake OpenAI server's)
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
METHOD_NOT_FOUND = -32601

Content = list[dict[str, Any]]


class ToolFailed(Exception):
    """A tool's failure, answered as a result with `isError` (as SDK servers answer a raised ToolError)."""


def _text(text: str) -> Content:
    return [{"type": "text", "text": text}]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _add(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text(str(int(args["a"]) + int(args["b"])))


def _getenv(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text(os.environ.get(str(args["name"]), "unset"))


def _header(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text(headers.get(str(args["name"]).lower(), "unset"))


def _pid(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text(str(os.getpid()))


def _fail(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    raise ToolFailed("the fake tool failed on purpose")


def _nothing(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text("")


def _echo(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    return _text(str(args["text"]))


def _chart(args: Mapping[str, Any], headers: Mapping[str, str]) -> Content:
    csv = {"uri": "file:///data/report.csv", "mimeType": "text/csv", "blob": _b64(b"a,b\n1,2\n")}
    return [
        {"type": "text", "text": "Here is the chart."},
        {"type": "image", "data": _b64(PNG_PIXEL), "mimeType": "image/png"},
        {"type": "resource", "resource": csv},
    ]


def _schema(**properties: str) -> dict[str, Any]:
    typed = {name: {"type": kind} for name, kind in properties.items()}
    return {"type": "object", "properties": typed, "required": list(properties)}


Handler = Callable[[Mapping[str, Any], Mapping[str, str]], Content]
TOOLS: dict[str, tuple[str, dict[str, Any], Handler]] = {
    "add": ("Add two integers.", _schema(a="integer", b="integer"), _add),
    "getenv": ("An environment variable of the server's process, or 'unset'.", _schema(name="string"), _getenv),
    "header": ("An HTTP request header (streamable HTTP only), or 'unset'.", _schema(name="string"), _header),
    "pid": ("The server's process id (tests kill it to prove restarts).", _schema(), _pid),
    "fail": ("Always fails, so tests see a tool error reach the model.", _schema(), _fail),
    "nothing": ("Answers with no text at all.", _schema(), _nothing),
    "echo": ("Says `text` back; marked read-only.", _schema(text="string"), _echo),
    "chart": ("A caption, a 1x1 PNG picture and a CSV file as an embedded resource.", _schema(), _chart),
}
READ_ONLY = {"echo"}


def _listing() -> dict[str, Any]:
    tools = []
    for name, (description, schema, _) in TOOLS.items():
        tool: dict[str, Any] = {"name": name, "description": description, "inputSchema": schema}
        if name in READ_ONLY:
            tool["annotations"] = {"readOnlyHint": True}
        tools.append(tool)
    return {"tools": tools}


def _called(params: Mapping[str, Any], headers: Mapping[str, str]) -> dict[str, Any]:
    name = params.get("name")
    if name not in TOOLS:
        return {"content": _text(f"Unknown tool: {name}"), "isError": True}
    try:
        return {"content": TOOLS[name][2](params.get("arguments") or {}, headers), "isError": False}
    except ToolFailed as exc:
        return {"content": _text(str(exc)), "isError": True}
    except (KeyError, TypeError, ValueError) as exc:
        return {"content": _text(f"Invalid arguments for {name}: {exc!r}"), "isError": True}


def answer(message: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The JSON-RPC response to one message; None for a notification (nothing is sent back)."""
    if "id" not in message:
        return None
    method, params = message.get("method"), message.get("params") or {}
    result: dict[str, Any]
    if method == "initialize":
        info = {"name": "fake", "version": "1.0"}
        result = {"protocolVersion": PROTOCOL_VERSION, "capabilities": {"tools": {}}, "serverInfo": info}
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = _listing()
    elif method == "tools/call":
        result = _called(params, headers or {})
    else:
        error = {"code": METHOD_NOT_FOUND, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve_stdio() -> None:
    """Answer newline-delimited JSON-RPC on stdin until it closes."""
    for line in sys.stdin:
        if not line.strip():
            continue
        response = answer(json.loads(line))
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve_stdio()
