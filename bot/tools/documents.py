"""list_files and read_document: every role sees its own chat's files and reads documents among them by id."""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.errors import ToolError
from bot.files.reading import open_document, pick, sheet_index, show
from bot.tools.base import Tool, ToolContext
from bot.tools.chat_files import ChatFiles, file_label

logger = logging.getLogger(__name__)

READ_TIMEOUT = 60.0  # a document that takes longer to parse is given up on; the turn goes on


class ListFilesTool(Tool):
    """Lists the files of the chat the turn belongs to; other chats' files are never shown."""

    name = "list_files"
    read_only = True
    for_everyone = True  # a chat's own files, nothing else
    description = "List this chat's files, newest first, with their file_id, name, type, size and date."

    def __init__(self, files: ChatFiles, timezone: str = "UTC") -> None:
        self._files = files
        self._zone = ZoneInfo(timezone)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        records = await self._files.listing(ctx)
        if not records:
            return "This chat has no files yet."
        lines = [f"{len(records)} file{'s' if len(records) != 1 else ''} in this chat, newest first:"]
        for record in records:
            when = datetime.fromtimestamp(record.created_at, self._zone).strftime("%Y-%m-%d %H:%M")
            lines.append(f"- {file_label(record)}, {record.origin} {when}")
        return "\n".join(lines)


class ReadDocumentTool(Tool):
    """Reads a document of this chat by file id, in parts: PDF pages, slides, sheets, sections of text."""

    name = "read_document"
    read_only = True
    for_everyone = True  # reads only the chat's own files, within size and time limits
    description = (
        "Read a document of this chat by file_id (PDF, Word, Excel, PowerPoint, HTML, Markdown, CSV, text) as "
        "Markdown, in parts; the result says how to read on."
    )
    parameters = {
        "type": "object",
        "properties": {
            "file_id": {"type": "string", "minLength": 1},
            "pages": {"type": "string", "description": "Pages, slides or parts: 3, 3-7 or 12-."},
            "sheet": {"type": "string", "description": "Sheet name or number."},
            "range": {"type": "string", "description": "Cells, such as A1:F50."},
        },
        "required": ["file_id"],
    }

    def __init__(self, files: ChatFiles, timeout: float = READ_TIMEOUT) -> None:
        self._files = files
        self._timeout = timeout

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        record = await self._files.get(ctx, str(args["file_id"]))
        try:
            async with asyncio.timeout(self._timeout):
                return await asyncio.to_thread(self._read, record.path, record.name, record.mime_type, record.id, args)
        except TimeoutError as exc:
            raise ToolError(f"{record.name} took longer than {self._timeout:g} s to read and was given up on.") from exc

    @staticmethod
    def _read(path: Any, name: str, mime_type: str, file_id: str, args: dict[str, Any]) -> str:
        document = open_document(path, name, mime_type, args.get("range") or None)
        if args.get("sheet"):
            if document.unit != "sheet":
                raise ToolError(f"{name} is a {document.kind}, which has no sheets; use pages.")
            index = sheet_index(document, str(args["sheet"]))
            chosen = range(index, index + 1)
        else:
            chosen = pick(args.get("pages") or None, document.count)
        return show(document, name, file_id, chosen)
