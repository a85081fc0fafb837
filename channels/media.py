"""Files that arrive with messages: saved under a size cap, one folder per platform, attached for the model."""

from __future__ import annotations

import logging
import mimetypes
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bot.bus import Attachment, InboundMessage
from bot.errors import ChannelError, ChannelUnavailable

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

MAX_MEDIA_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class MediaRef:
    """A file attached to a platform message, not yet downloaded; `source` is the platform's handle for it."""

    source: str
    unique_id: str
    kind: Literal["image", "file", "voice"]
    mime_type: str
    size: int | None
    name: str | None = None

    @property
    def filename(self) -> str:
        """A stable local file name: the platform's unique id plus a fitting suffix."""
        suffix = Path(self.name or "").suffix or mimetypes.guess_extension(self.mime_type) or ""
        return f"{self.unique_id}{suffix}"


def kind_of(mime_type: str) -> Literal["image", "file"]:
    """Images reach the model as image parts; every other file as a note."""
    return "image" if mime_type.startswith("image/") else "file"


Fetch = Callable[[MediaRef, Path], Awaitable[None]]
"""fetch(media, target): save the platform file `media` at `target`, raising ChannelError when it cannot."""


async def attach_media(
    message: InboundMessage, media: Sequence[MediaRef], folder: Path, fetch: Fetch, max_bytes: int = MAX_MEDIA_BYTES
) -> InboundMessage:
    """Download each file into the chat's folder under `folder` and attach it; a failed or too large one is a note."""
    notes: list[str] = []
    attachments: list[Attachment] = []
    for item in media:
        if item.size and item.size > max_bytes:
            notes.append(f"[{_a(item.kind)} of {item.size:,} bytes was sent but is too large to download]")
            continue
        target = folder / message.chat.folder / item.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            await fetch(item, target)
        except ChannelError as exc:
            logger.warning("[%s] could not download %s: %s", message.chat.session_key, item.unique_id, exc)
            notes.append(f"[{_a(item.kind)} was sent but could not be downloaded]")
            continue
        attachments.append(Attachment(str(target), item.mime_type, item.kind, item.name))
    text = "\n".join([message.text, *notes]).strip()
    return replace(message, text=text, attachments=message.attachments + tuple(attachments))


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


async def download_capped(
    session: aiohttp.ClientSession, url: str, target: Path, headers: dict[str, str], max_bytes: int = MAX_MEDIA_BYTES
) -> str:
    """GET `url` into `target`, refusing more than `max_bytes`; return the response's content type."""
    try:
        return await _download(session, url, target, headers, max_bytes)
    except BaseException:
        target.unlink(missing_ok=True)
        raise


async def _download(
    session: aiohttp.ClientSession, url: str, target: Path, headers: dict[str, str], max_bytes: int
) -> str:
    import aiohttp

    try:
        async with session.get(url, headers=headers) as response:
            if response.status >= 500:
                raise ChannelUnavailable(f"download failed with HTTP {response.status}")
            if response.status != 200:
                raise ChannelError(f"download refused with HTTP {response.status}")
            received = 0
            with target.open("wb") as out:
                async for chunk in response.content.iter_chunked(64 * 1024):
                    received += len(chunk)
                    if received > max_bytes:
                        raise ChannelError(f"file is larger than {max_bytes:,} bytes")
                    out.write(chunk)
            return response.content_type
    except aiohttp.ClientError as exc:
        raise ChannelUnavailable(f"download failed: {exc}") from exc
