import sqlite3
import stat
from pathlib import Path

import pytest

from bot.storage.sqlite import open_store, transaction


def test_a_new_store_is_private_in_a_private_folder_and_journals_ahead(tmp_path: Path) -> None:
    path = tmp_path / "state" / "store.db"
    db = open_store(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.in_transaction is False and db.isolation_level is None
    db.close()


def test_a_cache_syncs_less_and_a_store_waits_for_a_lock_before_failing(tmp_path: Path) -> None:
    cache = open_store(tmp_path / "cache.db", cache=True, busy_timeout=0.05)
    assert cache.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert cache.execute("PRAGMA busy_timeout").fetchone()[0] == 50
    cache.close()


def test_a_file_that_is_not_a_database_raises(tmp_path: Path) -> None:
    path = tmp_path / "garbage.db"
    path.write_bytes(b"not a database, only text " * 100)
    with pytest.raises(sqlite3.DatabaseError):
        open_store(path)


def test_an_in_memory_store_makes_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    db = open_store(":memory:")
    db.execute("CREATE TABLE t (x)")
    assert list(tmp_path.iterdir()) == []
    db.close()


def test_a_transaction_keeps_all_its_statements_or_none(tmp_path: Path) -> None:
    db = open_store(tmp_path / "store.db")
    db.execute("CREATE TABLE rows (id TEXT PRIMARY KEY, state TEXT)")
    with transaction(db):
        db.execute("INSERT INTO rows VALUES ('a', 'pending')")
        db.execute("UPDATE rows SET state = 'done' WHERE id = 'a'")
    with pytest.raises(sqlite3.IntegrityError), transaction(db):
        db.execute("INSERT INTO rows VALUES ('b', 'pending')")
        db.execute("INSERT INTO rows VALUES ('a', 'again')")  # fails: the insert of 'b' goes with it
    assert db.execute("SELECT id, state FROM rows").fetchall() == [("a", "done")]
    assert db.in_transaction is False
    db.close()
