"""Files out over HTTP upload (XEP-0363): the file is put on the server's upload service and its URL sent as a
link (XEP-0066) that clients show inline; without such a service, a notice naming the file instead."""

from __future__ import annotations

import logging
from pathlib import Path

from bot.bus import Attachment
from bot.errors import ChannelError, ChannelUnavailable
from channels.xmpp.client import XmppClient

logger = logging.getLogger(__name__)


def no_upload_notice(name: str) -> str:
    """What stands in for a file when the server offers no HTTP upload: its name, and no link."""
    return f"(a file, {name}, was meant for you here, but this server offers no file upload)"


async def upload(client: XmppClient, file: Attachment) -> str | None:
    """The file's download URL once uploaded; None when the server has no upload service."""
    from slixmpp.plugins.xep_0363.http_upload import FileTooBig, HTTPError, UploadServiceNotFound

    path = Path(file.path)
    name = file.name or path.name
    try:
        with path.open("rb") as data:
            return str(
                await client.plugin["xep_0363"].upload_file(
                    name, size=path.stat().st_size, content_type=file.mime_type, input_file=data, timeout=30
                )
            )
    except UploadServiceNotFound:
        logger.info("xmpp: the server offers no HTTP upload; %s goes as a notice", name)
        return None
    except FileTooBig as exc:
        raise ChannelError(f"{name} is larger than the server's upload limit ({exc})", code="file-too-big") from exc
    except HTTPError as exc:
        raise ChannelUnavailable(f"upload of {name} failed: {exc}") from exc
