"""Slash commands the agent understands in any chat."""

from __future__ import annotations

import re
from enum import StrEnum


class Command(StrEnum):
    NEW = "new"
    HELP = "help"
    STOP = "stop"
    STATUS = "status"
    START = "start"
    USAGE = "usage"
    PAIR = "pair"
    MODEL = "model"
    SESSIONS = "sessions"
    RESUME = "resume"


ALIASES = {"reset": Command.NEW}
"""Other words for a command, as users of other bots type them."""

GREETING = "Hi! I'm your assistant. Just write to me; /help lists the commands."

HELP_TEXT = (
    "Commands:\n"
    "/new (or /reset) - start a fresh conversation (what matters is kept in memory)\n"
    "/sessions - this chat's archived conversations; /resume N makes one the live conversation again\n"
    "/stop - stop what I'm doing right now\n"
    "/status - your role, model, persona, conversation length, tokens used and budget left\n"
    "/usage - your and this chat's tokens and cost today and this month\n"
    "/model - this chat's model and the others; /model NAME switches, /model default goes back\n"
    "/activation mention|always - admins, in a group: answer only when mentioned, or every message\n"
    "/pair approve CODE, /pair revoke ID - admins: let a sender in, or out\n"
    "/help - this list"
)
CONSOLE_HELP = "\n/exit or /quit - leave the terminal chat (Ctrl-D too)"
UNKNOWN_COMMAND = "Unknown command, /help lists them."
_COMMAND_WORD = re.compile(r"^/[A-Za-z][A-Za-z0-9_]*(@[A-Za-z0-9_]+)?$")


def help_text(channel: str) -> str:
    """The command list for a chat on `channel`; the terminal adds its own way out."""
    return HELP_TEXT + (CONSOLE_HELP if channel == "console" else "")


def is_unknown_command(text: str) -> bool:
    """Whether a message is shaped like a command (`/foo`, `/foo@bot`) that relaybot does not know."""
    words = text.split(maxsplit=1)
    return bool(words) and bool(_COMMAND_WORD.match(words[0])) and parse_command(text) is None


def parse_command(text: str) -> Command | None:
    """The command a message starts with (`/stop`, `/stop@mybot`), or None for ordinary text."""
    if not text.startswith("/"):
        return None
    word = text.split(maxsplit=1)[0][1:].split("@", 1)[0].lower()
    if word in ALIASES:
        return ALIASES[word]
    try:
        return Command(word)
    except ValueError:
        return None
