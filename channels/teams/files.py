"""Files the bot sends on Teams: in a personal chat a FileConsentCard, and on the user's Allow the bytes go to
the OneDrive upload URL Teams hands over, then a file card; elsewhere Teams lets a bot send no files, so a line
says so."""

from __future__ import annotations

import itertools
import logging
import mimetypes
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.bus import ChatRef, OutboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from bot.storage.recent import RecentMap
from channels.teams.send import text_activity

if TYPE_CHECKING:
    import aiohttp

logger = logging.getLogger(__name__)

CONSENT_CARD = "application/vnd.microsoft.teams.card.file.consent"
FILE_INFO_CARD = "application/vnd.microsoft.teams.card.file.info"
OFFER_KEY = "relaybot_offer"
OFFERS_KEPT = 256
UPLOAD_PIECE = 320 * 1024 * 10  # OneDrive upload sessions take pieces in multiples of 320 KiB
Post = Callable[[ChatRef, dict[str, Any]], Awaitable[str]]


def is_personal(chat: ChatRef) -> bool:
    """Whether a chat is a one-to-one one: channels and group chats have `19:` conversation ids."""
    return not chat.chat_id.startswith("19:") and chat.thread_id is None


class FileOffers:
    """Offers files with consent cards and uploads each one its user allows."""

    def __init__(self, http: aiohttp.ClientSession, post: Post) -> None:
        self._http = http
        self._post = post
        self._offers: RecentMap[str, tuple[ChatRef, Path]] = RecentMap(OFFERS_KEPT)
        self._ids = itertools.count(1)

    async def offer(self, message: OutboundMessage) -> None:
        """One consent card per file in a personal chat; one line naming the files anywhere else."""
        chat = message.chat
        if not is_personal(chat):
            names = ", ".join(Path(file.path).name for file in message.files)
            await self._post(chat, text_activity(f"({names}: Teams lets a bot send files only in a personal chat)"))
            return
        for file in message.files:
            path = Path(file.path)
            offer_id = f"{message.id}-{next(self._ids)}"
            self._offers[offer_id] = (chat, path)
            content = {
                "description": path.name,
                "sizeInBytes": path.stat().st_size,
                "acceptContext": {OFFER_KEY: offer_id},
                "declineContext": {OFFER_KEY: offer_id},
            }
            card = {"contentType": CONSENT_CARD, "name": path.name, "content": content}
            await self._post(chat, {"type": "message", "attachments": [card]})

    async def answered(self, value: dict[str, Any]) -> None:
        """A `fileConsent/invoke`: on accept, upload the file to `uploadInfo.uploadUrl` and show its file card."""
        offer_id = str((value.get("context") or {}).get(OFFER_KEY) or "")
        offer = self._offers.pop(offer_id, None)
        if offer is None:
            logger.info("teams: consent answer for an unknown or old offer %r", offer_id)
            return
        chat, path = offer
        if value.get("action") != "accept":
            logger.info("[%s] the user declined the file %s", chat.session_key, path.name)
            return
        info = value.get("uploadInfo") or {}
        await self._upload(str(info["uploadUrl"]), path)
        card = {
            "contentType": FILE_INFO_CARD,
            "contentUrl": info.get("contentUrl"),
            "name": info.get("name") or path.name,
            "content": {"uniqueId": info.get("uniqueId"), "fileType": info.get("fileType")},
        }
        await self._post(chat, {"type": "message", "attachments": [card]})

    async def _upload(self, url: str, path: Path) -> None:
        """PUT the bytes in pieces with Content-Range, as a OneDrive upload session wants them."""
        import aiohttp

        data = path.read_bytes()
        total = len(data)
        mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        for start in range(0, max(total, 1), UPLOAD_PIECE):
            piece = data[start : start + UPLOAD_PIECE]
            headers = {"Content-Range": f"bytes {start}-{start + len(piece) - 1}/{total}", "Content-Type": mime}
            try:
                async with self._http.put(url, data=piece, headers=headers) as response:
                    if response.status >= 500:
                        raise ChannelUnavailable(f"upload of {path.name}: HTTP {response.status}")
                    if response.status >= 400:
                        raise ChannelError(f"upload of {path.name} refused: HTTP {response.status}")
            except aiohttp.ClientError as exc:
                raise ChannelUnavailable(f"upload of {path.name}: {type(exc).__name__}") from exc
