"""Dead letters in the SQLite journal: inbound messages and replies that failed for good, listed, revived or dropped."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from bot.bus.messages import (
    ChatRef,
    InboundMessage,
    OutboundMessage,
    inbound_from_json,
    outbound_from_json,
)
from bot.storage.sqlite import transaction

Direction = Literal["in", "out"]
CRASH_REASON = "its turn stopped the process twice (the crash limit)"
CRASH_APOLOGY = (
    "Sorry, I couldn't answer your message: it stopped me twice while I was working on it, "
    "so I have set it aside. Please try again, perhaps worded differently."
)
PREVIEW_CHARS = 60
LATER_RETRIES = (60.0, 300.0, 1800.0, 7200.0)
"""After a send's quick retries fail for a reason that passes, it is tried again after 1 m, 5 m, 30 m and 2 h."""


@dataclass(frozen=True, slots=True)
class DeadLetter:
    """One failed message as `relaybot queue list` shows it; `when` is the failure's time (epoch seconds)."""

    id: str
    direction: Direction
    chat: ChatRef
    when: float
    attempts: int
    reason: str
    text: str

    @property
    def preview(self) -> str:
        """The first words of the message, on one line."""
        flat = " ".join(self.text.split())
        return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class Revived:
    """Dead letters put back: inbound messages to run again, replies to send again."""

    inbound: tuple[InboundMessage, ...] = ()
    outbound: tuple[OutboundMessage, ...] = ()

    @property
    def ids(self) -> list[str]:
        """Every revived message's id, inbound first."""
        return [m.id for m in self.inbound] + [m.id for m in self.outbound]


def apology_id(message_id: str) -> str:
    """The id of the apology for a message that failed for good (beside `<id>:reply`, its answer's)."""
    return f"{message_id}:apology"


def apology_for(message: InboundMessage, text: str) -> OutboundMessage:
    """The one message telling a sender their message failed for good; its id is not the reply's, so the answer of
    a retry is still sent, and a second failure of the same message is not apologised for again."""
    target = message.edit_of or message.platform_message_id  # an edit's own id names no platform message
    return OutboundMessage(message.chat, text, message.id, target, "error", id=apology_id(message.id))


def list_dead(db: sqlite3.Connection, chat: str | None = None) -> list[DeadLetter]:
    """Every dead letter, oldest first, optionally of one chat (its session key)."""
    letters: list[DeadLetter] = []
    for body, updated, starts, error in db.execute(
        "SELECT body, updated, starts, error FROM inbox WHERE state = 'failed' ORDER BY updated, seq"
    ):
        message = inbound_from_json(body)
        reason = error or "failed (no reason was recorded)"
        letters.append(DeadLetter(message.id, "in", message.chat, updated, starts, reason, message.text))
    for body, updated, attempts, error in db.execute(
        "SELECT body, updated, attempts, error FROM outbox WHERE state = 'failed' ORDER BY updated, seq"
    ):
        reply = outbound_from_json(body)
        reason = error or "failed (no reason was recorded)"
        letters.append(DeadLetter(reply.id, "out", reply.chat, updated, max(attempts, 1), reason, reply.text))
    letters.sort(key=lambda letter: letter.when)
    return [letter for letter in letters if chat is None or letter.chat.session_key == chat]


def revive(db: sqlite3.Connection, ids: Sequence[str], now: float) -> Revived:
    """Put these dead letters back to pending in one transaction (inbound with no crash count, replies after the
    chunks already confirmed); ids that are not dead letters are ignored."""
    inbound: list[InboundMessage] = []
    outbound: list[OutboundMessage] = []
    with transaction(db):
        for message_id in ids:
            row = db.execute("SELECT body FROM inbox WHERE id = ? AND state = 'failed'", (message_id,)).fetchone()
            if row is not None:
                db.execute(
                    "UPDATE inbox SET state = 'pending', starts = 0, error = NULL, updated = ? WHERE id = ?",
                    (now, message_id),
                )
                inbound.append(inbound_from_json(row[0]))
                continue
            row = db.execute("SELECT body FROM outbox WHERE id = ? AND state = 'failed'", (message_id,)).fetchone()
            if row is not None:
                db.execute(
                    "UPDATE outbox SET state = 'pending', attempts = 0, error = NULL, updated = ? WHERE id = ?",
                    (now, message_id),
                )
                outbound.append(outbound_from_json(row[0]))
    return Revived(tuple(inbound), tuple(outbound))


def drop_dead(db: sqlite3.Connection, ids: Sequence[str] = (), before: float | None = None) -> int:
    """Forget these dead letters, or every one that failed before `before`; how many went."""
    with transaction(db):
        if before is not None:
            inbox = db.execute("DELETE FROM inbox WHERE state = 'failed' AND updated < ?", (before,)).rowcount
            outbox = db.execute("DELETE FROM outbox WHERE state = 'failed' AND updated < ?", (before,)).rowcount
            return inbox + outbox
        gone = 0
        for message_id in ids:
            gone += db.execute("DELETE FROM inbox WHERE id = ? AND state = 'failed'", (message_id,)).rowcount
            gone += db.execute("DELETE FROM outbox WHERE id = ? AND state = 'failed'", (message_id,)).rowcount
        return gone


def oldest_dead(db: sqlite3.Connection) -> float | None:
    """When the oldest waiting dead letter failed, or None when there is none."""
    row = db.execute(
        "SELECT min(updated) FROM (SELECT updated FROM inbox WHERE state = 'failed'"
        " UNION ALL SELECT updated FROM outbox WHERE state = 'failed')"
    ).fetchone()
    return float(row[0]) if row and row[0] is not None else None


def format_age(seconds: float) -> str:
    """A duration in its largest whole unit (40s, 12m, 5h, 3d): how long a dead letter has waited."""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{max(int(seconds), 0)}s"
