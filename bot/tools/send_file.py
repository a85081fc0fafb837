"""The send_file tool: a workspace file to the current chat, checked against the platform's size limit first."""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Any, Literal

from bot.bus import Attachment, ChatRef, OutboundMessage, Trust
from bot.errors import ToolError
from bot.tools.base import Tool, ToolContext
from bot.tools.chat_files import ChatFiles
from bot.tools.uploads import MB, UploadLimits
from bot.tools.workspace import WorkspacePaths

CHAT_FOLDERS = ("inbox", "outbox")
"""Below admin, send_file sends only files in the asking chat's own `inbox/<chat>/` and `outbox/<chat>/`."""

PHOTO_LIMIT = 10 * MB
MAX_FILES = 10  # Telegram's album and Discord's attachments per message
PHOTO_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def file_kind(mime_type: str, size: int) -> Literal["image", "file"]:
    """Images small enough go as photos (shown inline); everything else as a document."""
    return "image" if mime_type in PHOTO_TYPES and size <= PHOTO_LIMIT else "file"


class SendFileTool(Tool):
    """Sends a file from the workspace to the chat the turn belongs to."""

    name = "send_file"
    description = (
        "Send a file, or several together, from the workspace to this chat (images are shown inline, other "
        "files as documents). "
        "Use it when the user asks for a file or a file is the best answer; write the file first. "
        "Below admin, only this chat's own files can be sent: what it sent (inbox/<channel>/<chat>/) "
        "and what was made for it (outbox/<channel>/<chat>/)."
    )
    parameters = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "description": "Path relative to the workspace."},
            "paths": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_FILES,
                "description": f"Several paths, sent together (a Telegram album; one message elsewhere); "
                f"at most {MAX_FILES}.",
            },
            "file_ids": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": MAX_FILES,
                "description": "This chat's files by file_id (list_files shows them), sent together.",
            },
            "caption": {"type": "string", "description": "A short text sent with the file(s)."},
        },
    }

    def __init__(self, paths: WorkspacePaths, uploads: UploadLimits, chat_files: ChatFiles | None = None) -> None:
        self._paths = paths
        self._uploads = uploads
        self._chat_files = chat_files

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> str:
        asked = [*([args["path"]] if args.get("path") else []), *(args.get("paths") or [])]
        ids = list(dict.fromkeys(args.get("file_ids") or []))
        if not asked and not ids:
            raise ToolError("give path or paths (relative to the workspace), or file_ids of this chat's files.")
        if len(asked) + len(ids) > MAX_FILES:
            raise ToolError(f"at most {MAX_FILES} files go in one send_file call; send the rest in another.")
        if ids and self._chat_files is None:
            raise ToolError("files cannot be sent by file_id here; give their paths.")
        # a file id is the chat's own by its record: it needs no folder check
        owned = [str((await self._chat_files.get(ctx, file_id)).path) for file_id in ids] if self._chat_files else []
        files = [self._checked(text, ctx) for text in dict.fromkeys(asked)]
        files += [self._checked(text, ctx, owned=True) for text in owned]
        caption = str(args.get("caption") or "")
        attachments = tuple(attachment for attachment, _, _ in files)
        await ctx.send(OutboundMessage(ctx.chat, caption, in_reply_to=ctx.turn_id, kind="progress", files=attachments))
        return "Sent " + ", ".join(f"{shown} ({size:,} bytes)" for _, shown, size in files) + " to this chat."

    def _checked(self, text: str, ctx: ToolContext, owned: bool = False) -> tuple[Attachment, str, int]:
        """The file at `text` as an attachment, with its shown path and size, once every check has passed."""
        path = self._paths.resolve(text)
        shown = self._paths.display(path)
        if not owned and not ctx.trust.at_least(Trust.ADMIN) and not self._belongs_to(path, ctx.chat):
            raise ToolError(
                f"{shown} does not belong to this chat; for this sender only the chat's own files can be sent: "
                + " and ".join(f"{name}/{ctx.chat.folder}/" for name in CHAT_FOLDERS)
            )
        if not path.is_file():
            raise ToolError(f"{shown} is not a file in the workspace.")
        limit = self._uploads.of(ctx.chat)
        if limit is None:
            raise ToolError(f"this chat ({ctx.chat.channel}) cannot receive files; tell the user the path: {shown}")
        size = path.stat().st_size
        if size > limit:
            raise ToolError(
                f"{shown} is {size / MB:.1f} MB, but {ctx.chat.channel} accepts files up to {limit / MB:.0f} MB "
                "from a bot. Compress or split it, or tell the user where it is."
            )
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return Attachment(str(path), mime, file_kind(mime, size)), shown, size

    def _belongs_to(self, path: Path, chat: ChatRef) -> bool:
        """Whether `path` (resolved) lies in the chat's own inbox or outbox folder."""
        root = self._paths.root
        return any(path.is_relative_to(root / name / chat.folder) for name in CHAT_FOLDERS)
