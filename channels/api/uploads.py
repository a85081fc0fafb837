"""POST /upload: a file from the web chat (multipart `file`, with `text`, `session` and `id`), sent as a message
with the file attached, as a chat app's upload is; the reply comes over the session's WebSocket."""

from __future__ import annotations

import logging
import mimetypes
import re
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote

from aiohttp import BodyPartReader, web

from bot.bus import Attachment, ChatRef, new_id
from channels.api.hub import session_chat
from channels.api.rpc.methods import MAX_TEXT
from channels.api.web.auth import Caller
from channels.api.web.gate import Gatekeeper
from channels.media import MAX_MEDIA_BYTES, kind_of

logger = logging.getLogger(__name__)

FIELDS = ("text", "session", "id")
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")


class Uploads(Protocol):
    """What the upload route needs of the API channel: authentication, the staging folder, submitting a message."""

    gate: Gatekeeper
    staging: Path | None

    async def submit(
        self,
        caller: Caller,
        chat: ChatRef,
        text: str,
        client_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> str: ...


def add_routes(app: web.Application, channel: Uploads) -> None:
    """Mount /upload (a state change: same origin, and the session's CSRF token when by cookie)."""

    async def upload(request: web.Request) -> web.Response:
        caller = channel.gate.check_change(request)
        if channel.staging is None:
            raise web.HTTPNotFound(text="this gateway takes no files over the API")
        if not request.content_type.startswith("multipart/"):
            raise web.HTTPBadRequest(text="an upload needs a file, sent as multipart/form-data")
        fields: dict[str, str] = {}
        attachment: Attachment | None = None
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise web.HTTPBadRequest(text="nested multipart is not taken")
            if part.name == "file" and part.filename and attachment is None:
                attachment = await _save(part, channel.staging / ChatRef("api", caller.name).folder)
            elif part.name in FIELDS:
                fields[part.name] = (await part.text())[: MAX_TEXT + 1]
        if attachment is None:
            raise web.HTTPBadRequest(text="an upload needs a file")
        if len(fields.get("text", "")) > MAX_TEXT:
            Path(attachment.path).unlink(missing_ok=True)
            raise web.HTTPRequestEntityTooLarge(max_size=MAX_TEXT, actual_size=MAX_TEXT + 1)
        chat = session_chat(caller, fields.get("session"))
        client_id = await channel.submit(caller, chat, fields.get("text", "").strip(), fields.get("id"), (attachment,))
        logger.info("[%s] api: %s uploaded %s", chat.session_key, caller.name, attachment.name)
        return web.json_response({"id": client_id, "name": attachment.name}, status=202)

    app.router.add_post("/upload", upload)


async def _save(part: BodyPartReader, folder: Path) -> Attachment:
    """The part written under `folder` with a fresh prefix, up to MAX_MEDIA_BYTES (413 beyond, nothing kept)."""
    given = unquote(part.filename or "file")  # aiohttp's own client percent-encodes it; browsers send it as it is
    name = _UNSAFE_NAME.sub("_", Path(given).name).strip(" .") or "file"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    target = folder / f"{new_id()[:8]}-{name}"
    size = 0
    with target.open("wb") as file:
        while chunk := await part.read_chunk():
            size += len(chunk)
            if size > MAX_MEDIA_BYTES:
                file.close()
                target.unlink(missing_ok=True)
                raise web.HTTPRequestEntityTooLarge(max_size=MAX_MEDIA_BYTES, actual_size=size)
            file.write(chunk)
    declared = part.headers.get("Content-Type", "")
    guessed = mimetypes.guess_type(name)[0]
    mime = guessed or (declared if declared and declared != "application/octet-stream" else "application/octet-stream")
    return Attachment(str(target), mime, kind_of(mime), name)
