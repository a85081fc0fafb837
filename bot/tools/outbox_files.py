"""Files the bot makes for a chat: written privately into `outbox/<channel>/<chat>/` and sent as attachments."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from bot.bus import Attachment, ChatRef
from bot.tools.send_file import file_kind


def save_to_outbox(workspace: Path, chat: ChatRef, stem: str, suffix: str, data: bytes) -> Path:
    """Write `data` as a new private file in the chat's outbox folder (made 0700) and return its path."""
    folder = workspace / "outbox" / chat.folder
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}{suffix}"
    path = folder / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    return path


def outbox_attachment(path: Path, mime_type: str) -> Attachment:
    """An attachment for a file in the outbox: a photo when it is an image small enough, else a document."""
    return Attachment(str(path), mime_type, file_kind(mime_type, path.stat().st_size))
