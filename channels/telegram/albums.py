"""Telegram albums: the parts of one `media_group_id` arrive as separate messages and become one turn."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from bot.bus import InboundMessage
from bot.cancelling import cancel_and_wait
from channels.media import MediaRef

logger = logging.getLogger(__name__)

ALBUM_WINDOW = 1.0
"""Seconds after an album's last part before it is closed: Telegram sends the parts within moments of each other."""


@dataclass(frozen=True, slots=True)
class AlbumPart:
    """One message of an album, parsed, with the file it carries and the image of the message it replies to."""

    message: InboundMessage
    media: MediaRef | None
    quote_image: MediaRef | None = None


Deliver = Callable[[list[AlbumPart]], Awaitable[None]]


class AlbumGatherer:
    """Collects album parts per chat and album; an album is delivered `window` seconds after its latest part."""

    def __init__(
        self,
        deliver: Deliver,
        window: float = ALBUM_WINDOW,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._deliver = deliver
        self._window = window
        self._sleep = sleep
        self._parts: dict[tuple[str, str], list[AlbumPart]] = {}
        self._timers: dict[tuple[str, str], asyncio.Task[None]] = {}

    @property
    def open_albums(self) -> int:
        """How many albums are still gathering parts."""
        return len(self._parts)

    def add(self, album_id: str, part: AlbumPart) -> None:
        """Add a part to its album and restart the album's closing timer."""
        key = (part.message.chat.session_key, album_id)
        parts = self._parts.setdefault(key, [])
        if any(p.message.platform_message_id == part.message.platform_message_id for p in parts):
            return
        parts.append(part)
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        self._timers[key] = asyncio.create_task(self._close_later(key), name=f"album:{key[0]}:{album_id}")

    async def flush(self) -> None:
        """Deliver every open album now (at shutdown), without waiting for its window."""
        timers, self._timers = list(self._timers.values()), {}
        await cancel_and_wait(*timers)
        for key in list(self._parts):
            await self._close(key)

    async def _close_later(self, key: tuple[str, str]) -> None:
        await self._sleep(self._window)
        self._timers.pop(key, None)
        await self._close(key)

    async def _close(self, key: tuple[str, str]) -> None:
        parts = self._parts.pop(key, [])
        if not parts:
            return
        try:
            await self._deliver(parts)
        except Exception:
            logger.exception("[%s] could not deliver album %s of %d parts", key[0], key[1], len(parts))


def merge_album(parts: list[AlbumPart]) -> tuple[InboundMessage, list[MediaRef], MediaRef | None]:
    """One message for the whole album: every caption, a mention in any of them, the first part's id and reply."""
    ordered = sorted(parts, key=lambda p: int(p.message.platform_message_id or 0))
    first = ordered[0].message
    captions = [p.message.text for p in ordered if p.message.text]
    message = replace(
        first,
        text="\n\n".join(captions),
        mentioned=any(p.message.mentioned for p in ordered),
        reply_to=next((p.message.reply_to for p in ordered if p.message.reply_to), None),
    )
    quoting = next((p for p in ordered if p.message.reply_to), None)
    media = [p.media for p in ordered if p.media is not None]
    return message, media, quoting.quote_image if quoting else None
