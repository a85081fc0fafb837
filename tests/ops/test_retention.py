"""Retention: archived sessions, ledger rows, finished journal rows and cron runs past their age go; this month's
ledger rows stay for the budgets; `relaybot status` sizes."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from bot.bus import ChatRef, InboundMessage
from bot.bus.journal import Journal
from bot.config.schema import Config
from bot.ops.retention import ledger_cutoff, prune_state, state_sizes
from bot.usage.ledger import CallRecord, UsageLedger

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC).timestamp()
DAY = 86400.0


def config(tmp_path: Path, **retention: object) -> Config:
    return Config.model_validate({"workspace": tmp_path / "w", "state_dir": tmp_path / "s", "retention": retention})


def call(ts: float) -> CallRecord:
    return CallRecord(ts, "t:1", "t:u", "turn", "m", 1, 1, 0, None, False, 0.1, "ok")


def test_ledger_rows_of_the_current_month_are_never_pruned() -> None:
    month_start = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    assert ledger_cutoff(NOW, 1 * DAY, "UTC") == month_start
    assert ledger_cutoff(NOW, 30 * DAY, "UTC") == NOW - 30 * DAY


def test_old_state_of_each_kind_is_pruned_and_the_rest_kept(tmp_path: Path) -> None:
    cfg = config(tmp_path, sessions="30d", ledger="1d", journal="7d", run_logs="30d")
    sessions = tmp_path / "s" / "sessions"
    sessions.mkdir(parents=True)
    for name, age in (
        ("a.20260101T000000.archived.jsonl", 60),
        ("b.20261110T000000.archived.jsonl", 10),
        ("a.jsonl", 90),
    ):
        (sessions / name).write_text("{}\n")
        os.utime(sessions / name, (NOW - age * DAY, NOW - age * DAY))
    ledger = UsageLedger(tmp_path / "s" / "usage.db")
    for ts in (NOW - 50 * DAY, NOW - 25 * DAY, NOW - 15 * DAY):  # Oct 1, Oct 26, Nov 5
        ledger.record(call(ts))
    journal = Journal(tmp_path / "s" / "journal.db", clock=lambda: NOW - 10 * DAY)
    journal.open()
    done, waiting = (InboundMessage(ChatRef("t", "1"), "u", text) for text in ("done", "waiting"))
    journal.add_inbound(done)
    journal.add_inbound(waiting)
    journal.set_inbound([done.id], "done")
    journal.close()
    runs = tmp_path / "s" / "cron_runs.jsonl"
    runs.write_text(
        "".join(
            json.dumps({"job_id": "j", "ran_at": NOW - age * DAY, "ok": True, "delivered": True}) + "\n"
            for age in (40, 5)
        )
    )

    pruned = prune_state(cfg, NOW)

    assert (pruned.sessions, pruned.ledger, pruned.journal, pruned.run_logs) == (1, 2, 1, 1)
    kept = ["a.jsonl", "b.20261110T000000.archived.jsonl"]
    assert sorted(p.name for p in sessions.iterdir()) == [".pruned", *kept]  # the stamp tells memory indexes
    assert [c.ts for c in ledger.calls()] == [NOW - 15 * DAY]
    assert [json.loads(line)["ran_at"] for line in runs.read_text().splitlines()] == [NOW - 5 * DAY]
    ledger.close()
    assert "sessions " in state_sizes(cfg) and "ledger " in state_sizes(cfg)


def test_null_keeps_a_kind_forever(tmp_path: Path) -> None:
    cfg = config(tmp_path, sessions=None, ledger=None, run_logs=None)
    sessions = tmp_path / "s" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "a.1.archived.jsonl").write_text("{}\n")
    os.utime(sessions / "a.1.archived.jsonl", (0, 0))
    assert prune_state(cfg, NOW).sessions == 0
    assert (sessions / "a.1.archived.jsonl").exists()


def test_files_past_their_age_go_with_their_records(tmp_path: Path) -> None:
    from bot.files.records import FileBook

    cfg = config(tmp_path, files="30d")
    inbox = tmp_path / "w" / "inbox"
    inbox.mkdir(parents=True)
    (inbox / "old.pdf").write_bytes(b"%PDF")
    (inbox / "new.pdf").write_bytes(b"%PDF")
    stamps = iter([NOW - 40 * DAY, NOW - 5 * DAY])
    book = FileBook(tmp_path / "s" / "files.db", tmp_path / "w", clock=lambda: next(stamps))
    old, new = book.register("memory", inbox / "old.pdf"), book.register("memory", inbox / "new.pdf")
    book.close()
    assert prune_state(cfg, NOW).files == 1
    assert not old.path.exists() and new.path.exists()
    assert [r.id for r in FileBook(tmp_path / "s" / "files.db", tmp_path / "w").listing("memory")] == [new.id]


def test_staged_files_no_agent_took_go_at_the_files_age(tmp_path: Path) -> None:
    cfg = config(tmp_path, files="30d")
    chat = tmp_path / "s" / "incoming" / "telegram" / "666"
    chat.mkdir(parents=True)
    (chat / "old.jpg").write_bytes(b"x")
    (chat / "new.jpg").write_bytes(b"x")
    os.utime(chat / "old.jpg", (NOW - 40 * DAY, NOW - 40 * DAY))
    os.utime(chat / "new.jpg", (NOW - 5 * DAY, NOW - 5 * DAY))
    assert prune_state(cfg, NOW).files == 1
    assert not (chat / "old.jpg").exists() and (chat / "new.jpg").exists()
