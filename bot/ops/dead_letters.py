"""`relaybot queue`'s operations on dead letters, the same through the control socket and on a stopped bot's
journal: list them, retry them (each logged once), drop them."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from bot.bus.contract import DeadLetters
from bot.bus.dead_letters import DeadLetter, format_age
from bot.bus.messages import ChatRef

logger = logging.getLogger(__name__)

AgentOf = Callable[[ChatRef], str]
HEADINGS = ["id", "dir", "chat", "agent", "failed", "tries", "reason"]
Handler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def letter_to_dict(letter: DeadLetter, agent: str) -> dict[str, Any]:
    """A dead letter as JSON (`relaybot queue list --json`, the control socket, the dashboard)."""
    return {
        "id": letter.id,
        "direction": letter.direction,
        "chat": letter.chat.session_key,
        "agent": agent,
        "when": letter.when,
        "attempts": letter.attempts,
        "reason": letter.reason,
        "preview": letter.preview,
    }


def describe_letters(letters: Sequence[dict[str, Any]], now: float) -> list[str]:
    """`relaybot queue list`'s lines, in columns: id, direction, chat, agent, age, attempts, reason, first words."""
    rows = [
        [
            letter["id"],
            letter["direction"],
            letter["chat"],
            letter["agent"],
            f"{format_age(now - float(letter['when']))} ago",
            f"{letter['attempts']}×",
            letter["reason"],
        ]
        for letter in letters
    ]
    widths = [max((len(row[column]) for row in rows), default=0) for column in range(len(HEADINGS))]
    lines = []
    for cells, preview in zip([HEADINGS, *rows], ["message", *(letter["preview"] for letter in letters)], strict=True):
        lines.append(
            "  ".join(
                cell.ljust(max(width, len(head))) for cell, width, head in zip(cells, widths, HEADINGS, strict=True)
            )
            + f"  {preview}"
        )
    return lines


async def list_letters(dead: DeadLetters, agent_of: AgentOf, chat: str | None = None) -> list[dict[str, Any]]:
    """Every dead letter as JSON, oldest first, optionally of one chat."""
    return [letter_to_dict(letter, agent_of(letter.chat)) for letter in await dead.letters(chat)]


async def retry_letters(dead: DeadLetters, ids: Sequence[str] = (), chat: str | None = None) -> list[str]:
    """Put back these dead letters, or (no ids) every one, or every one of `chat`; each retry is logged once."""
    letters = {letter.id: letter for letter in await dead.letters(chat)}
    wanted = [i for i in ids if i in letters] if ids else list(letters)
    retried = await dead.retry(wanted)
    for message_id in retried:
        letter = letters[message_id]
        what = "running its turn again" if letter.direction == "in" else "sending the reply again"
        logger.info("[%s] dead letter %s retried: %s", letter.chat.session_key, message_id, what)
    return retried


async def drop_letters(dead: DeadLetters, ids: Sequence[str] = (), older_than: float | None = None) -> int:
    """Forget these dead letters, or those that failed more than `older_than` seconds ago; how many went."""
    before = time.time() - older_than if older_than is not None else None
    dropped = await dead.drop(ids, before)
    if dropped:
        logger.info("dropped %d dead letter%s", dropped, "" if dropped == 1 else "s")
    return dropped


def queue_handlers(dead: DeadLetters, agent_of: AgentOf) -> dict[str, Handler]:
    """The control socket's `queue.list`, `queue.retry` and `queue.drop` ops, against the running bus."""

    async def listed(request: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "letters": await list_letters(dead, agent_of, _text(request.get("chat")))}

    async def retried(request: dict[str, Any]) -> dict[str, Any]:
        ids = [str(i) for i in request.get("ids") or ()]
        if not ids and not request.get("all"):
            return {"ok": False, "error": "name the dead letters to retry, or ask for all of them"}
        return {"ok": True, "retried": await retry_letters(dead, ids, _text(request.get("chat")))}

    async def dropped(request: dict[str, Any]) -> dict[str, Any]:
        ids = [str(i) for i in request.get("ids") or ()]
        older = request.get("older_than")
        if not ids and not isinstance(older, int | float):
            return {"ok": False, "error": "name the dead letters to drop, or an age"}
        count = await drop_letters(dead, ids, float(older) if isinstance(older, int | float) else None)
        return {"ok": True, "dropped": count}

    return {"queue.list": listed, "queue.retry": retried, "queue.drop": dropped}


def _text(value: object) -> str | None:
    return str(value) if value else None
