from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from bot.bus import ChatRef, InboundMessage
from bot.errors import ChannelError, ChannelUnavailable
from channels.media import MediaRef, attach_media, download_capped

MESSAGE = InboundMessage(ChatRef("test", "1"), sender_id="u1", text="look")


async def test_files_are_saved_in_the_chats_own_folder_and_attached(tmp_path: Path) -> None:
    async def fetch(media: MediaRef, target: Path) -> None:
        target.write_bytes(media.source.encode())

    media = [
        MediaRef("png", "F1", "image", "image/png", 3),
        MediaRef("pdf", "F2", "file", "application/pdf", 3, "a.pdf"),
    ]
    message = await attach_media(MESSAGE, media, tmp_path / "inbox", fetch)
    assert [(Path(a.path).name, a.kind) for a in message.attachments] == [("F1.png", "image"), ("F2.pdf", "file")]
    assert (tmp_path / "inbox" / "test" / "1" / "F1.png").read_bytes() == b"png" and message.text == "look"


async def test_oversized_and_failed_files_become_notes(tmp_path: Path) -> None:
    async def fetch(media: MediaRef, target: Path) -> None:
        raise ChannelError("gone")

    media = [MediaRef("a", "F1", "file", "text/plain", 10**9), MediaRef("b", "F2", "image", "image/png", 5)]
    message = await attach_media(MESSAGE, media, tmp_path, fetch)
    assert message.attachments == ()
    assert message.text.splitlines()[1:] == [
        "[a file of 1,000,000,000 bytes was sent but is too large to download]",
        "[an image was sent but could not be downloaded]",
    ]


async def test_a_voice_note_is_attached_as_voice_and_leaves_the_text_alone(tmp_path: Path) -> None:
    async def fetch(media: MediaRef, target: Path) -> None:
        target.write_bytes(b"OggS")

    message = await attach_media(MESSAGE, [MediaRef("v", "V1", "voice", "audio/ogg", 4)], tmp_path, fetch)
    assert message.text == "look" and message.attachments[0].kind == "voice"


@pytest_asyncio.fixture
async def server() -> AsyncIterator[str]:
    async def serve(request: web.Request) -> web.Response:
        status = int(request.match_info["status"])
        return web.Response(status=status, body=b"x" * 1000, content_type="image/png")

    app = web.Application()
    app.router.add_get("/{status}", serve)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def test_download_respects_the_cap_and_translates_errors(server: str, tmp_path: Path) -> None:
    target = tmp_path / "f.png"
    async with aiohttp.ClientSession() as session:
        assert await download_capped(session, f"{server}/200", target, {}, max_bytes=1000) == "image/png"
        assert target.stat().st_size == 1000
        with pytest.raises(ChannelError, match="larger than"):
            await download_capped(session, f"{server}/200", target, {}, max_bytes=999)
        assert not target.exists()
        with pytest.raises(ChannelUnavailable):
            await download_capped(session, f"{server}/503", target, {})
        with pytest.raises(ChannelError, match="HTTP 403"):
            await download_capped(session, f"{server}/403", target, {})
