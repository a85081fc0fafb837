"""/help, /start and the answers to commands that do not apply: every line derived from the catalogue."""

from __future__ import annotations

from bot.bus import Trust
from bot.commands.catalogue import BuiltIn, Place, usable_here

GREETING = "Hi! I'm your assistant. Just write to me; /help lists the commands."
UNKNOWN_COMMAND = "Unknown command, /help lists them."
_ROLE_NAMES = {Trust.USER: "users", Trust.ADMIN: "admins", Trust.OWNER: "owners"}


def help_line(command: BuiltIn) -> str:
    """`/new (or /reset) - start a fresh conversation …`, with the arguments it takes."""
    aliases = "".join(f" (or /{alias})" for alias in command.aliases)
    args = f" {command.args}" if command.args else ""
    return f"/{command.name}{args}{aliases} - {command.help}"


def help_text(place: Place, role: Trust) -> str:
    """The commands a sender of `role` may use in a chat at `place`, one line each."""
    lines = [help_line(command) for command in usable_here(place, role)]
    return "\n".join(["Commands:", *lines])


def not_usable(command: BuiltIn, place: Place) -> str:
    """Why a built-in command does not answer here: the wrong kind of chat, or a role too low."""
    if place not in command.places:
        return f"/{command.name} does not apply in this chat; /help lists the commands that do."
    return f"Sorry, only {_ROLE_NAMES.get(command.role, 'everyone')} can use /{command.name}."
