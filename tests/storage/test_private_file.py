"""The private file writer: the whole new content or the old, 0600, no temporary file left behind."""

import os
import stat
from pathlib import Path

import pytest

from bot.storage import private_file
from bot.storage.private_file import write_private


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_and_its_new_folder_are_private(tmp_path: Path) -> None:
    target = tmp_path / "state" / "pairing.json"
    write_private(target, '{"a": 1}')
    assert target.read_text() == '{"a": 1}'
    assert mode_of(target) == 0o600 and mode_of(target.parent) == 0o700
    assert os.listdir(target.parent) == ["pairing.json"]


def test_an_existing_file_is_replaced_whole_and_made_private(tmp_path: Path) -> None:
    target = tmp_path / "memory.md"
    target.write_text("old and long")
    target.chmod(0o644)
    write_private(target, b"new")
    assert target.read_bytes() == b"new" and mode_of(target) == 0o600


def test_a_caller_may_keep_another_mode(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    write_private(target, "#!/bin/sh\n", mode=0o700)
    assert mode_of(target) == 0o700


def test_a_failed_write_leaves_the_old_content_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "owner_dm.json"
    target.write_text("old")

    def full_disk(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(private_file.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space"):
        write_private(target, "new")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["owner_dm.json"]


def test_the_file_and_its_folder_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(private_file.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    write_private(tmp_path / "x.json", "{}")
    assert len(synced) == 2  # the temporary file before the rename, the folder after it


def test_a_file_that_is_a_symlink_is_written_at_its_target_and_the_link_stays(tmp_path: Path) -> None:
    target = tmp_path / "dotfiles" / "relaybot.yaml"
    target.parent.mkdir()
    target.write_text("old")
    link = tmp_path / "config.yaml"
    link.symlink_to(target)
    write_private(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new" and mode_of(target) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["config.yaml", "dotfiles"]
