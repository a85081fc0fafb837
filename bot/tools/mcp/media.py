"""Pictures and embedded resources an MCP tool returns: saved in the chat's outbox and sent to the chat."""

from __future__ import annotations

import base64
import binascii
import mimetypes
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.bus import OutboundMessage
from bot.tools.base import ToolContext
from bot.tools.chat_files import ChatFiles
from bot.tools.outbox_files import outbox_attachment, save_to_outbox
from bot.tools.uploads import UploadLimits

MAX_FILES = 10


@dataclass(frozen=True, slots=True)
class Media:
    """A file an MCP tool returned: its bytes, type and a name to save it under."""

    data: bytes
    mime_type: str
    name: str


def media_of(result: Any) -> list[Media]:
    """The images, audio and embedded resources (blob or text) among a CallToolResult's content blocks."""
    found = []
    for block in result.content:
        kind = getattr(block, "type", "")
        if kind in ("image", "audio"):
            data = _decoded(block.data)
            if data is not None:
                found.append(Media(data, block.mime_type or "application/octet-stream", kind))
        elif kind == "resource":
            resource = block.resource
            blob = getattr(resource, "blob", None)
            data = _decoded(blob) if blob is not None else str(getattr(resource, "text", "")).encode()
            if data is not None:
                mime = resource.mime_type or ("text/plain" if blob is None else "application/octet-stream")
                found.append(Media(data, mime, _name_of(str(resource.uri))))
    return found


async def deliver(
    media: list[Media],
    workspace: Path,
    ctx: ToolContext,
    server: str,
    uploads: UploadLimits,
    files: ChatFiles | None = None,
) -> str:
    """Save each file in the chat's outbox (a record of the chat's, with `files`) and send them in one message; a note
    for the model says where they are."""
    paths = []
    for item in media[:MAX_FILES]:
        suffix = mimetypes.guess_extension(item.mime_type) or ""
        stem = re.sub(r"[^\w.-]", "_", f"{server}-{item.name}")[:60]
        paths.append(save_to_outbox(workspace, ctx.chat, stem, "" if stem.endswith(suffix) else suffix, item.data))
    shown = ", ".join(str(path.relative_to(workspace)) for path in paths)
    if files is not None:
        ids = [(await files.made(ctx, path, item.name)).id for path, item in zip(paths, media, strict=False)]
        shown += f" (file ids {', '.join(ids)})"
    if not uploads.takes_files(ctx.chat):
        return f"[the tool returned {len(paths)} file(s), saved as {shown}; this chat cannot show files]"
    attachments = tuple(outbox_attachment(path, item.mime_type) for path, item in zip(paths, media, strict=False))
    await ctx.send(OutboundMessage(ctx.chat, "", in_reply_to=ctx.turn_id, kind="progress", files=attachments))
    return f"[the tool returned {len(paths)} file(s), sent to this chat and saved as {shown}]"


def _decoded(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _name_of(uri: str) -> str:
    """The last part of a resource URI, as a file name."""
    return uri.rstrip("/").rsplit("/", 1)[-1] or "resource"
