"""Files that arrive with chat messages: saved per platform under a size cap, attached to the message."""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from bot.bus import Attachment, InboundMessage

MAX_MEDIA_BYTES = 20 * 1024 * 1024
MediaKind = Literal["image", "file", "voice"]
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True, slots=True)
class MediaRef:
    """A file attached to a platform message, not yet downloaded; `file_id` is the platform's handle on it."""

    file_id: str
    unique_id: str
    kind: MediaKind
    mime_type: str
    size: int | None
    name: str | None = None


Download = Callable[[MediaRef, Path], Awaitable[None]]
"""download(media, target): the platform call that writes one file to `target`."""


def kind_of(mime_type: str) -> MediaKind:
    """Images reach the model as image parts; everything else is a file."""
    return "image" if mime_type.startswith("image/") else "file"


class MediaFolder:
    """One platform's media folder: downloads files under the size cap and attaches them to messages."""

    def __init__(self, root: Path, max_bytes: int = MAX_MEDIA_BYTES) -> None:
        self._root = root
        self._max_bytes = max_bytes

    async def attach(self, message: InboundMessage, media: Sequence[MediaRef], download: Download) -> InboundMessage:
        """Download each file (a too-large one becomes a note) and return the message carrying them."""
        notes: list[str] = []
        attachments = list(message.attachments)
        for ref in media:
            if ref.size and ref.size > self._max_bytes:
                notes.append(f"[a {ref.kind} of {ref.size:,} bytes was sent but is too large to download]")
                continue
            target = self.path_for(ref)
            target.parent.mkdir(parents=True, exist_ok=True)
            await download(ref, target)
            attachments.append(Attachment(str(target), ref.mime_type, ref.kind))
            if ref.kind == "voice":
                notes.append("[a voice message arrived; transcription is not available yet]")
        text = "\n".join([message.text, *notes]).strip()
        return replace(message, text=text, attachments=tuple(attachments))

    def path_for(self, media: MediaRef) -> Path:
        """Where a file is saved: its unique id plus the extension of its name or type."""
        suffix = Path(media.name or "").suffix or mimetypes.guess_extension(media.mime_type) or ""
        return self._root / _UNSAFE.sub("_", f"{media.unique_id}{suffix}")
