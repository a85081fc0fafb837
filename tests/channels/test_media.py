from pathlib import Path

from bot.bus import ChatRef, InboundMessage
from channels.media import MediaFolder, MediaRef, kind_of

MESSAGE = InboundMessage(ChatRef("test", "1"), sender_id="1", text="look")


async def write_bytes(media: MediaRef, target: Path) -> None:
    target.write_bytes(f"content of {media.file_id}".encode())


async def test_files_are_saved_and_attached_in_order(tmp_path: Path) -> None:
    folder = MediaFolder(tmp_path / "test")
    media = [MediaRef("a", "A1", "image", "image/png", 10), MediaRef("b", "B2", "file", "application/pdf", 20, "r.pdf")]
    message = await folder.attach(MESSAGE, media, write_bytes)
    assert [(Path(a.path).name, a.kind) for a in message.attachments] == [("A1.png", "image"), ("B2.pdf", "file")]
    assert Path(message.attachments[1].path).read_bytes() == b"content of b"
    assert message.text == "look"


async def test_a_file_over_the_cap_becomes_a_note_and_is_not_downloaded(tmp_path: Path) -> None:
    async def refuse(media: MediaRef, target: Path) -> None:
        raise AssertionError("downloaded a file over the cap")

    message = await MediaFolder(tmp_path, max_bytes=100).attach(MESSAGE, [MediaRef("x", "X", "file", "video/mp4", 101)], refuse)
    assert message.attachments == () and message.text == "look\n[a file of 101 bytes was sent but is too large to download]"


async def test_a_voice_note_is_announced(tmp_path: Path) -> None:
    bare = InboundMessage(ChatRef("test", "1"), sender_id="1", text="")
    message = await MediaFolder(tmp_path).attach(bare, [MediaRef("v", "V", "voice", "audio/ogg", 5)], write_bytes)
    assert message.text == "[a voice message arrived; transcription is not available yet]"
    assert message.attachments[0].kind == "voice"


def test_saved_names_stay_inside_the_folder(tmp_path: Path) -> None:
    path = MediaFolder(tmp_path).path_for(MediaRef("f", "../../etc/passwd", "file", "text/plain", 1, "x.txt"))
    assert path.parent == tmp_path and path.name == ".._.._etc_passwd.txt"


def test_images_are_told_apart_by_mime_type() -> None:
    assert (kind_of("image/webp"), kind_of("application/pdf")) == ("image", "file")
