"""The file book: one record per file per scope, found again on sight, never across scopes, pruned by age."""

from pathlib import Path

from bot.files.records import FileBook


def saved(tmp_path: Path, name: str, content: bytes = b"data") -> Path:
    path = tmp_path / "inbox" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def test_a_file_gets_one_record_with_its_name_type_size_and_date(tmp_path: Path) -> None:
    book = FileBook(tmp_path / "files.db", clock=lambda: 1000.0)
    path = saved(tmp_path, "AgADx.docx", b"12345")
    record = book.register("memory/chats/telegram_5", path, "report.docx")
    assert record.id.startswith("f_") and record.name == "report.docx" and record.size == 5
    assert record.mime_type == "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    assert record.created_at == 1000.0 and record.origin == "received"
    assert book.register("memory/chats/telegram_5", path, "report.docx") == record
    assert book.get("memory/chats/telegram_5", record.id) == record


def test_another_scopes_file_is_not_found_or_listed(tmp_path: Path) -> None:
    book = FileBook(tmp_path / "files.db")
    record = book.register("memory/chats/telegram_5", saved(tmp_path, "a.txt"))
    assert book.get("memory/chats/telegram_6", record.id) is None
    assert book.listing("memory/chats/telegram_6") == []
    assert [r.id for r in book.listing("memory/chats/telegram_5")] == [record.id]


def test_pruning_removes_old_records_and_their_files(tmp_path: Path) -> None:
    now = [100.0]
    book = FileBook(tmp_path / "files.db", clock=lambda: now[0])
    old = book.register("s", saved(tmp_path, "old.txt"))
    now[0] = 500.0
    new = book.register("s", saved(tmp_path, "new.txt"))
    assert book.prune(before=300.0) == 1
    assert not old.path.exists() and new.path.exists()
    assert [r.id for r in book.listing("s")] == [new.id]


def test_the_book_survives_a_restart(tmp_path: Path) -> None:
    record = FileBook(tmp_path / "files.db").register("s", saved(tmp_path, "a.csv"))
    assert FileBook(tmp_path / "files.db").get("s", record.id) == record


def test_a_workspace_moved_elsewhere_keeps_its_files_found(tmp_path: Path) -> None:
    old = tmp_path / "old"
    record = FileBook(tmp_path / "files.db", old).register("s", saved(old, "a.csv", b"x,y"))
    old.rename(tmp_path / "restored")
    found = FileBook(tmp_path / "files.db", tmp_path / "restored").get("s", record.id)
    assert found is not None and found.path.read_bytes() == b"x,y"
