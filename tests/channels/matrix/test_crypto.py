"""Matrix encryption switches: the setting resolved against the installed extra, the private store, the skip log."""

import logging
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot.errors import ChannelError
from channels.matrix.crypto import encryption_on, private_store
from channels.matrix.intake import SyncIntake
from channels.matrix.parse import Me
from channels.numbered import NumberedChoices


def test_unset_follows_the_extra_and_true_without_it_names_the_key() -> None:
    assert encryption_on(None, installed=True) and not encryption_on(None, installed=False)
    assert encryption_on(True, installed=True) and not encryption_on(False, installed=True)
    with pytest.raises(ChannelError, match=r"channels.matrix.encryption is true.*relaybot\[matrix-e2e\]"):
        encryption_on(True, installed=False)


def test_the_store_folder_is_private_even_when_it_existed(tmp_path: Path) -> None:
    folder = tmp_path / "matrix" / "crypto"
    folder.mkdir(parents=True, mode=0o755)
    assert stat.S_IMODE(private_store(folder).stat().st_mode) == 0o700


def encrypted(room: str, number: int) -> dict[str, Any]:
    """A megolm event as /sync delivers it when nothing decrypted it."""
    content = {"algorithm": "m.megolm.v1.aes-sha2", "ciphertext": "AwgA", "session_id": "s", "sender_key": "k"}
    return {"type": "m.room.encrypted", "event_id": f"${room}{number}", "sender": "@a:localhost", "content": content}


async def test_without_encryption_each_encrypted_room_gets_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    published: list[object] = []

    async def publish(message: object) -> None:
        published.append(message)

    me = Me("@bot:localhost", "bot")
    intake = SyncIntake(None, publish, me, tmp_path, None, NumberedChoices(), False, lambda room: True)  # type: ignore[arg-type]
    rooms = {
        room: SimpleNamespace(timeline=SimpleNamespace(events=[encrypted(room, n) for n in range(3)]))
        for room in ("!a:localhost", "!b:localhost")
    }
    with caplog.at_level(logging.INFO, "channels.matrix.intake"):
        await intake.messages(SimpleNamespace(rooms=SimpleNamespace(join=rooms)))
    lines = [record.getMessage() for record in caplog.records]
    assert published == [] and len(lines) == 2
    assert all("skipping encrypted messages" in line and "encryption" in line for line in lines)
    assert "!a:localhost" in lines[0] and "!b:localhost" in lines[1]
