"""A chat's files as its tools see them: records of its own scope, looked up by id, never another chat's."""

from __future__ import annotations

import asyncio
import mimetypes
from pathlib import Path

from bot.bus import ChatRef
from bot.errors import ToolError
from bot.files.records import FileBook, FileRecord, Origin, scope_name
from bot.tools.base import ToolContext
from bot.tools.files import human_size


def file_label(record: FileRecord) -> str:
    """`f_1a2b3c4d report.docx (application/pdf, 12.0 KB)`: how the model sees a file."""
    return f"{record.id} {record.name} ({record.mime_type}, {human_size(record.size)})"


class ChatFiles:
    """The file book seen per chat: a turn's scope is its memory scope, or the chat itself when it has none."""

    def __init__(self, book: FileBook, workspace: Path) -> None:
        self.book = book
        self._workspace = workspace

    def scope(self, memory_dir: Path | None, chat: ChatRef) -> str:
        """The scope name of a turn in `chat` whose memory lives in `memory_dir`."""
        return scope_name(self._workspace, memory_dir) if memory_dir is not None else f"chat/{chat.folder}"

    def register(
        self,
        memory_dir: Path | None,
        chat: ChatRef,
        path: Path,
        name: str | None = None,
        mime_type: str = "",
        origin: Origin = "received",
    ) -> FileRecord:
        """The record of a file the chat received or was made for it (the same record when seen again)."""
        return self.book.register(self.scope(memory_dir, chat), path, name, mime_type, origin)

    async def made(self, ctx: ToolContext, path: Path, name: str | None = None) -> FileRecord:
        """Register a file a tool made for the turn's chat, under `name` (by default its file name)."""
        mime = mimetypes.guess_type(name or path.name)[0] or "application/octet-stream"
        return await asyncio.to_thread(self.register, ctx.memory_dir, ctx.chat, path, name, mime, "made")

    async def get(self, ctx: ToolContext, file_id: str) -> FileRecord:
        """The turn's chat's file `file_id`; ToolError "no such file" for any other, another chat's included."""
        record = await asyncio.to_thread(self.book.get, self.scope(ctx.memory_dir, ctx.chat), file_id)
        if record is None:
            raise ToolError(f"no such file: {file_id!r}; list_files shows this chat's files.")
        return record

    async def listing(self, ctx: ToolContext) -> list[FileRecord]:
        """The turn's chat's files, newest first."""
        return await asyncio.to_thread(self.book.listing, self.scope(ctx.memory_dir, ctx.chat))
