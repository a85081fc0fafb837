"""Slash commands the agent understands in any chat."""

from __future__ import annotations

from enum import StrEnum


class Command(StrEnum):
    NEW = "new"
    HELP = "help"
    STOP = "stop"
    STATUS = "status"
    START = "start"


GREETING = "Hi! I'm your assistant. Just write to me; /help lists the commands."

HELP_TEXT = (
    "Commands:\n"
    "/new - start a fresh conversation (what matters is kept in memory)\n"
    "/stop - stop what I'm doing right now\n"
    "/status - model, conversation length and tokens used\n"
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
