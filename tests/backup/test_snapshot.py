"""Copying live state: SQLite through the online backup API, torn JSONL lines left out, locks and logs skipped."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.backup.snapshot import snapshot_folder


def test_database_in_wal_mode_is_copied_with_its_uncheckpointed_rows(tmp_path: Path) -> None:
    live = tmp_path / "state"
    live.mkdir()
    db = sqlite3.connect(live / "usage.db")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA wal_autocheckpoint=0")
    db.execute("CREATE TABLE t (n INTEGER)")
    db.executemany("INSERT INTO t VALUES (?)", [(n,) for n in range(100)])
    db.commit()
    assert (live / "usage.db-wal").stat().st_size > 0
    snapshot_folder(live, tmp_path / "copy")
    assert not (tmp_path / "copy" / "usage.db-wal").exists()
    copy = sqlite3.connect(tmp_path / "copy" / "usage.db")
    assert copy.execute("SELECT count(*) FROM t").fetchone() == (100,)
    db.close()
    copy.close()


def test_half_written_jsonl_line_is_left_out_of_the_copy(tmp_path: Path) -> None:
    live = tmp_path / "state" / "sessions"
    live.mkdir(parents=True)
    (live / "a.jsonl").write_text('{"n": 1}\n{"n": 2}\n{"n": ')
    snapshot_folder(tmp_path / "state", tmp_path / "copy")
    assert (tmp_path / "copy" / "sessions" / "a.jsonl").read_text() == '{"n": 1}\n{"n": 2}\n'


def test_logs_sockets_and_locks_are_not_copied(tmp_path: Path) -> None:
    live = tmp_path / "state"
    (live / "logs").mkdir(parents=True)
    (live / "logs" / "relaybot.log").write_text("x")
    (live / "gateway.lock").write_text("1")
    (live / "pairing.json").write_text("{}")
    (live / "approvals.json").write_text("{}")
    assert snapshot_folder(live, tmp_path / "copy") == 2
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["approvals.json", "pairing.json"]
