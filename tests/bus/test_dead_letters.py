"""Dead letters in the SQLite journal: kept past retention until dropped, put back whole, listed per chat."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from bot.bus import ChatRef, InboundMessage, LocalBus, OutboundMessage
from bot.bus.dead_letters import apology_for
from bot.bus.journal import RETENTION, Journal, prune_journal

CHAT = ChatRef("telegram", "42")
OTHER = ChatRef("telegram", "43")


async def test_a_failed_reply_is_kept_past_the_retention_until_it_is_dropped(tmp_path: Path) -> None:
    now = [1_000_000.0]
    journal = Journal(tmp_path / "journal.db", clock=lambda: now[0])
    journal.open()
    journal.add_outbound(OutboundMessage(CHAT, "lost", id="r1"), ())
    journal.add_outbound(OutboundMessage(CHAT, "sent", id="r2"), ())
    journal.set_outbound("r1", "failed", "Forbidden: bot was blocked by the user")
    journal.set_outbound("r2", "sent")
    journal.close()
    assert prune_journal(tmp_path / "journal.db", now[0] + 1) == 1  # the sent one only
    now[0] += 2 * RETENTION
    journal.open()
    [letter] = journal.dead_letters()
    assert (letter.id, letter.reason, letter.attempts, letter.preview) == (
        "r1",
        "Forbidden: bot was blocked by the user",
        1,
        "lost",
    )
    assert journal.drop_dead(before=now[0] - 3 * RETENTION) == 0
    assert journal.drop_dead(before=now[0]) == 1
    assert journal.dead_letters() == []


async def test_a_retried_message_runs_again_and_a_retried_reply_resumes_after_its_confirmed_chunks(
    tmp_path: Path,
) -> None:
    bus = LocalBus(tmp_path / "journal.db")
    await bus.start()
    message = InboundMessage(CHAT, "42", "again please")
    await bus.publish_inbound(message)
    assert (await bus.consume_inbound()).id == message.id
    await bus.publish_outbound(OutboundMessage(OTHER, "part one. part two.", id="r1"))
    assert (await bus.consume_outbound()).id == "r1"
    await bus.mark_chunk_sent("r1", 0)
    await bus.mark_failed("r1", "Bad Request: chat not found")
    await bus.stop()

    journal = Journal(tmp_path / "journal.db")  # two crashes of its turn, as the crash limit counts them
    journal.open()
    journal.begin_inbound([message.id])
    journal.begin_inbound([message.id])
    journal.close()
    bus = LocalBus(tmp_path / "journal.db")
    await bus.start()
    apology = await bus.consume_outbound()
    assert (apology.kind, apology.id) == ("error", f"{message.id}:apology")
    assert [d.id for d in await bus.dead_letters.letters(CHAT.session_key)] == [message.id]
    assert sorted(await bus.dead_letters.retry([message.id, "r1", "unknown"])) == sorted([message.id, "r1"])
    assert (await bus.consume_inbound()).id == message.id
    assert (await bus.consume_outbound()).id == "r1"
    assert await bus.chunks_sent("r1") == 1
    assert (await bus.stats()).dead_letters == 0
    await bus.stop()


def test_a_journal_from_before_dead_letters_gains_their_columns(tmp_path: Path) -> None:
    path = tmp_path / "journal.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE inbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, dedupe TEXT UNIQUE,"
        " body TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending', starts INTEGER NOT NULL DEFAULT 0,"
        " updated REAL NOT NULL);"
        "CREATE TABLE outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, body TEXT NOT NULL,"
        " state TEXT NOT NULL DEFAULT 'pending', chunks_sent INTEGER NOT NULL DEFAULT 0,"
        " ambiguous INTEGER NOT NULL DEFAULT 0, error TEXT, updated REAL NOT NULL);"
    )
    old.close()
    journal = Journal(path)
    journal.open()
    journal.add_outbound(OutboundMessage(CHAT, "x", id="r1"), ())
    assert journal.defer_outbound("r1", "Bad Gateway") == 1
    journal.set_outbound("r1", "failed", "Bad Gateway")
    assert [d.attempts for d in journal.dead_letters()] == [1]
    journal.close()


async def test_a_failed_turns_message_is_one_dead_letter_and_its_apology_is_sent_once_whatever_the_retries(
    tmp_path: Path,
) -> None:
    bus = LocalBus(tmp_path / "journal.db")
    told: list[tuple[str, str]] = []
    bus.dead_letters.on_inbound_failed(lambda message, reason: told.append((message.id, reason)))
    await bus.start()
    message = InboundMessage(CHAT, "42", "what now?", platform_message_id="9")
    await bus.publish_inbound(message)
    for _ in range(2):  # it fails, is retried, and fails again
        assert (await bus.consume_inbound()).id == message.id
        await bus.begin_inbound([message.id])
        await bus.fail_inbound([message], "the model is down", apology_for(message, "Sorry."))
        [letter] = await bus.dead_letters.letters()
        assert (letter.id, letter.direction, letter.attempts, letter.reason) == (
            message.id,
            "in",
            1,
            "the model is down",
        )
        assert await bus.dead_letters.retry([message.id]) == [message.id]
    apology = await bus.consume_outbound()
    assert (apology.id, apology.text, apology.reply_to_platform_id) == (f"{message.id}:apology", "Sorry.", "9")
    assert told == [(message.id, "the model is down")] * 2
    stats = await bus.stats()
    assert (stats.outbound_pending, stats.inbound_pending, stats.dead_letters) == (1, 1, 0)

    assert (await bus.consume_inbound()).id == message.id  # the third run answers: its reply is not the apology
    assert await bus.publish_outbound(
        OutboundMessage(CHAT, "Here.", message.id, id=f"{message.id}:reply"), [message.id]
    )
    assert (await bus.consume_outbound()).text == "Here."
    await bus.stop()
