"""File tools: read, write, edit and list files in the workspace."""

from __future__ import annotations

import asyncio
import mimetypes
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from bot.errors import ToolError
from bot.storage.private_file import write_private
from bot.tools.base import Tool, ToolContext
from bot.tools.workspace import WorkspacePaths

READ_LIMIT = 2000
PAGE_CHARS = 50_000
SNIFF_BYTES = 8192
LIST_LIMIT = 500
NEW_FILE_MODE = 0o600  # the workspace is private, like everything under the relaybot home

T = TypeVar("T")
WriteCheck = Callable[[Path, str, ToolContext], str]
"""Looks at a write before it happens (real path, new text, who asks), on a thread: the text to write, or ToolError."""


def unchecked(path: Path, text: str, ctx: ToolContext) -> str:
    """Every write goes through as it is."""
    return text


def human_size(size: int) -> str:
    """`532 bytes`, `1.2 KB`, `3.4 MB`."""
    if size < 1024:
        return f"{size} byte{'s' if size != 1 else ''}"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            break
    return f"{value:.1f} {unit}"


def refuse_binary(path: Path, shown: str) -> None:
    """Raise ToolError when the file does not look like UTF-8 text (a NUL byte or invalid UTF-8 up front)."""
    with path.open("rb") as file:
        head = file.read(SNIFF_BYTES)
    # A multi-byte character may be cut at the end of a full sample; only an error before that counts.
    sample = head if len(head) < SNIFF_BYTES else head[:-3]
    try:
        sample.decode("utf-8")
        binary = b"\0" in head
    except UnicodeDecodeError:
        binary = True
    if binary:
        kind = mimetypes.guess_type(path.name)[0] or "unknown binary type"
        size = human_size(path.stat().st_size)
        raise ToolError(f"{shown} is a binary file ({kind}, {size}); the file tools only handle text.")


def read_page(path: Path, offset: int, limit: int) -> tuple[str, int, int]:
    """Lines `offset`.. of a text file, at most `limit` lines and about PAGE_CHARS characters.

    Returns the text, the number of lines shown and the file's total line count.
    """
    taken: list[str] = []
    chars = 0
    total = 0
    full = False
    with path.open(encoding="utf-8", errors="replace") as file:
        for total, line in enumerate(file, 1):
            if total < offset or full:
                continue
            if len(taken) >= limit or (taken and chars + len(line) > PAGE_CHARS):
                full = True
                continue
            if len(line) > PAGE_CHARS:
                line = line[:PAGE_CHARS] + f"\n[line {total} is cut after {PAGE_CHARS:,} characters]\n"
            taken.append(line)
            chars += len(line)
    return "".join(taken), len(taken), total


def read_exactly(path: Path) -> str:
    """The whole file as UTF-8, line endings untouched, so an edit changes only what it replaces."""
    with path.open(encoding="utf-8", newline="") as file:
        return file.read()


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename it over `path`: all or nothing."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else NEW_FILE_MODE
    write_private(path, text, mode)


class _FileTool(Tool):
    """A tool that works on workspace paths."""

    def __init__(self, paths: WorkspacePaths, check: WriteCheck = unchecked) -> None:
        self._paths = paths
        self._check = check

    def _existing_file(self, raw: str) -> tuple[Path, str]:
        path = self._paths.resolve(raw)
        shown = self._paths.display(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder, not a file; use list_dir to see what is in it.")
        if not path.exists():
            raise ToolError(f"{shown} does not exist.")
        return path, shown

    async def _io(self, shown: str, work: Callable[..., T], *args: Any) -> T:
        """Run blocking file work on a thread; OS and encoding errors become ToolError."""
        try:
            return await asyncio.to_thread(work, *args)
        except UnicodeEncodeError as exc:
            raise ToolError(f"the text for {shown} is not valid Unicode ({exc.reason}); nothing was written.") from exc
        except UnicodeDecodeError as exc:
            raise ToolError(f"{shown} is not valid UTF-8 text; nothing was changed.") from exc
        except OSError as exc:
            raise ToolError(f"cannot access {shown}: {exc.strerror or exc}") from exc


class ReadFileTool(_FileTool):
    name = "read_file"
    read_only = True
    description = (
        "Read a text file from the workspace. Long files come in pages: the result says how many "
        "lines remain and which offset reads the next page."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": f"Most lines to read (default {READ_LIMIT})."},
        },
        "required": ["path"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, shown = self._existing_file(args["path"])
        offset = args.get("offset", 1)
        await self._io(shown, refuse_binary, path, shown)
        text, shown_lines, total = await self._io(shown, read_page, path, offset, args.get("limit", READ_LIMIT))
        if total == 0:
            return f"({shown} is empty)"
        if offset > total:
            raise ToolError(f"{shown} has {total} lines; offset {offset} is past the end.")
        remaining = total - (offset - 1) - shown_lines
        if remaining:
            following = offset + shown_lines
            text += f"\n[{remaining} more lines in {shown}; read_file with offset={following} to continue]"
        return text


class WriteFileTool(_FileTool):
    name = "write_file"
    description = "Create or replace a text file in the workspace (folders are created as needed)."
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = self._paths.resolve(args["path"])
        shown = self._paths.display(path)
        if path.is_dir():
            raise ToolError(f"{shown} is a folder; give a file path.")
        content = await self._io(shown, self._check, path, args["content"], ctx)
        await self._io(shown, write_atomically, path, content)
        return f"Wrote {human_size(len(content.encode('utf-8')))} to {shown}."


class EditFileTool(_FileTool):
    name = "edit_file"
    description = (
        "Replace one exact piece of text in a workspace file. old_text must occur exactly once; "
        "include enough surrounding text to make it unique."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "old_text": {"type": "string", "minLength": 1, "description": "Exact text to replace."},
            "new_text": {"type": "string", "description": "Replacement text."},
        },
        "required": ["path", "old_text", "new_text"],
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path, shown = self._existing_file(args["path"])
        await self._io(shown, refuse_binary, path, shown)
        text = await self._io(shown, read_exactly, path)
        old = args["old_text"]
        count = text.count(old)
        if count == 0:
            raise ToolError(
                f"old_text was not found in {shown}; nothing was changed. "
                "Read the file and copy the text exactly, including whitespace."
            )
        if count > 1:
            raise ToolError(
                f"old_text occurs {count} times in {shown}; nothing was changed. "
                "Include more surrounding text so it matches exactly once."
            )
        changed = await self._io(shown, self._check, path, text.replace(old, args["new_text"], 1), ctx)
        await self._io(shown, write_atomically, path, changed)
        return f"Edited {shown}."


class ListDirTool(_FileTool):
    name = "list_dir"
    read_only = True
    description = "List a workspace folder: sub-folders end with '/', files show their size."
    parameters = {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "Folder relative to the workspace (default '.')."}},
    }

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        path = self._paths.resolve(args.get("path", "."))
        shown = self._paths.display(path)
        if not path.is_dir():
            raise ToolError(f"{shown} is not a folder." if path.exists() else f"{shown} does not exist.")
        lines = await self._io(shown, _listing, path)
        if not lines:
            return f"({shown} is empty)"
        extra = len(lines) - LIST_LIMIT
        return "\n".join(lines[:LIST_LIMIT]) + (f"\n[{extra} more entries not shown]" if extra > 0 else "")


def _listing(folder: Path) -> list[str]:
    """One line per entry, folders first, each group sorted by name."""
    entries = sorted(folder.iterdir(), key=lambda entry: (not entry.is_dir(), entry.name.lower()))
    lines = []
    for entry in entries:
        if entry.is_symlink():
            lines.append(f"{entry.name} -> {os.readlink(entry)}")
        elif entry.is_dir():
            lines.append(f"{entry.name}/")
        else:
            lines.append(f"{entry.name}  ({human_size(entry.stat().st_size)})")
    return lines
