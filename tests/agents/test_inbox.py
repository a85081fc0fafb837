"""Staged files move into the answering agent's inbox; a message replayed after a crash finds them where they went."""

import stat
from pathlib import Path

from bot.agents.inbox import deliver_files, has_files, staging_folder
from bot.bus import Attachment, ChatRef, InboundMessage, Quote


def staged(staging: Path, name: str, content: bytes) -> Attachment:
    path = staging / "telegram" / "5" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return Attachment(str(path), "application/pdf", "file", "report.pdf")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_staging_folder_is_private_and_outside_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir(mode=0o755)
    (tmp_path / "state" / "incoming").mkdir(mode=0o755)
    folder = staging_folder(tmp_path / "state")
    assert folder == tmp_path / "state" / "incoming" and mode(folder) == 0o700


def test_staged_files_move_to_the_inbox_under_the_same_chat_folder_and_others_stay(tmp_path: Path) -> None:
    staging, inbox = staging_folder(tmp_path / "state"), tmp_path / "agents" / "work" / "inbox"
    elsewhere = tmp_path / "given.txt"
    elsewhere.write_text("kept")
    image = Attachment(str(staging / "telegram" / "5" / "q.jpg"), "image/jpeg", "image")
    Path(image.path).parent.mkdir(parents=True)
    Path(image.path).write_bytes(b"\xff\xd8")
    message = InboundMessage(
        ChatRef("telegram", "5"),
        "5",
        "see",
        attachments=(staged(staging, "AbC.pdf", b"%PDF"), Attachment(str(elsewhere), "text/plain")),
        reply_to=Quote("earlier", image=image),
    )
    assert has_files(message)

    moved = deliver_files(message, staging, inbox)

    target = inbox / "telegram" / "5" / "AbC.pdf"
    assert moved.attachments[0] == Attachment(str(target), "application/pdf", "file", "report.pdf")
    assert target.read_bytes() == b"%PDF" and not (staging / "telegram" / "5" / "AbC.pdf").exists()
    assert moved.attachments[1].path == str(elsewhere) and elsewhere.read_text() == "kept"
    assert moved.reply_to is not None and moved.reply_to.image is not None
    assert Path(moved.reply_to.image.path).read_bytes() == b"\xff\xd8"
    assert [mode(folder) for folder in (inbox, inbox / "telegram", inbox / "telegram" / "5")] == [0o700] * 3


def test_a_message_replayed_after_its_files_moved_finds_them_in_the_inbox(tmp_path: Path) -> None:
    staging, inbox = staging_folder(tmp_path / "state"), tmp_path / "inbox"
    message = InboundMessage(ChatRef("telegram", "5"), "5", "", attachments=(staged(staging, "x.pdf", b"%PDF"),))
    first = deliver_files(message, staging, inbox)

    again = deliver_files(message, staging, inbox)  # the crash came before the turn was done: the bus replays it

    assert again == first and Path(again.attachments[0].path).read_bytes() == b"%PDF"


def test_a_message_without_files_is_not_touched(tmp_path: Path) -> None:
    message = InboundMessage(ChatRef("telegram", "5"), "5", "hi", reply_to=Quote("earlier"))
    assert not has_files(message)
    assert deliver_files(message, staging_folder(tmp_path), tmp_path / "inbox") == message
