"""The sync token survives restarts in a private file, and belongs to one account."""

import stat
from pathlib import Path

from channels.matrix.sync_state import SyncState, SyncStateFile


def test_the_token_is_saved_privately_and_read_back_for_the_same_account_only(tmp_path: Path) -> None:
    path = tmp_path / "matrix" / "sync.json"
    states = SyncStateFile(path)
    states.advance(SyncState("@bot:x", "DEV"), "s72_1")
    assert states.load("@bot:x") == SyncState("@bot:x", "DEV", None, "s72_1")
    assert states.load("@other:x") == SyncState("@other:x")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_an_unreadable_file_means_syncing_from_now(tmp_path: Path) -> None:
    path = tmp_path / "sync.json"
    path.write_text("{torn")
    assert SyncStateFile(path).load("@bot:x") == SyncState("@bot:x")
