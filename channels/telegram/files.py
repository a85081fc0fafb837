"""Files to Telegram: one as a photo, voice note or document, several as albums (sendMediaGroup, 2-10 of a kind)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from bot.bus import Attachment

ALBUM_MAX = 10


def upload_groups(files: Sequence[Attachment]) -> list[list[Attachment]]:
    """The files in the order given, grouped for sending: photos with photos and documents with documents (Telegram
    albums mix neither), at most ten to a group."""
    groups: list[list[Attachment]] = []
    for kind in ("image", "file"):
        same = [file for file in files if file.kind != "voice" and (file.kind == "image") == (kind == "image")]
        groups += [same[start : start + ALBUM_MAX] for start in range(0, len(same), ALBUM_MAX)]
    return groups + [[file] for file in files if file.kind == "voice"]  # no album holds voice notes


def group_upload(
    bot: Any, group: Sequence[Attachment], chat_id: int, caption: str | None, thread: int | None
) -> Callable[[], Awaitable[Any]]:
    """The call that sends one group: sendPhoto, sendVoice or sendDocument for one file, sendMediaGroup for 2-10."""
    from telegram import InputMediaDocument, InputMediaPhoto

    common: dict[str, Any] = {"chat_id": chat_id, "message_thread_id": thread}
    if len(group) == 1:
        (file,) = group
        path = Path(file.path)
        if file.kind == "image":
            return lambda: bot.send_photo(photo=path.read_bytes(), caption=caption, **common)
        if file.kind == "voice":
            return lambda: bot.send_voice(voice=path.read_bytes(), caption=caption, **common)
        return lambda: bot.send_document(document=path.read_bytes(), filename=path.name, caption=caption, **common)

    def media() -> list[Any]:
        items = []
        for index, file in enumerate(group):
            path, text = Path(file.path), caption if index == 0 else None
            kind = InputMediaPhoto if file.kind == "image" else InputMediaDocument
            items.append(kind(path.read_bytes(), caption=text, filename=path.name))
        return items

    return lambda: bot.send_media_group(media=media(), **common)
