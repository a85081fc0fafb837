"""Slash commands the agent understands in any chat."""

from __future__ import annotations

from enum import StrEnum


class Command(StrEnum):
    NEW = "new"
    HELP = "help"
    STOP = "stop"
    STATUS = "status"
    START = "start"
    USAGE = "usage"
    PAIR = "pair"


GREETING = "Hi! I'm your assistant. Just write to me; /help lists the commands."

HELP_TEXT = (
    "Commands:\n"
    "/new - start a fresh conversation (what matters is kept in memory)\n"
    "/stop - stop what I'm doing right now\n"
    "/status - your role, model, persona, conversation length, tokens used and budget left\n"
    "/usage - your and this chat's tokens and cost today and this month\n"
    "/pair approve CODE, /pair revoke ID - admins: let a sender in, or out\n"
    "/help - this list"
)


def parse_command(text: str) -> Command | None:
    """The command a message starts with (`/stop`, `/stop@mybot`), or None for ordinary text."""
    if not text.startswith("/"):
        return None
    word = text.split(maxsplit=1)[0][1:].split("@", 1)[0].lower()
    try:
        return Command(word)
    except ValueError:
        return None
