"""Recognising a command in a message's text: `/name args` or `/name@bot args`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.commands.catalogue import BuiltIn, built_in

_COMMAND_WORD = re.compile(r"^/([A-Za-z][A-Za-z0-9_]*)(@[A-Za-z0-9_]+)?$")


@dataclass(frozen=True, slots=True)
class Invocation:
    """A command-shaped message: the word typed (lower case, no slash or @bot) and the text after it."""

    word: str
    args: str

    @property
    def built_in(self) -> BuiltIn | None:
        """The built-in command the word names, or None (a plugin's command, or an unknown one)."""
        return built_in(self.word)


def invocation(text: str) -> Invocation | None:
    """The command a message starts with, or None for ordinary text (including paths such as `/usr/bin`)."""
    words = text.split(maxsplit=1) if text.startswith("/") else []
    matched = _COMMAND_WORD.match(words[0]) if words else None
    if matched is None:
        return None
    return Invocation(matched.group(1).lower(), words[1].strip() if len(words) > 1 else "")


def parse_command(text: str) -> BuiltIn | None:
    """The built-in command a message starts with (`/stop`, `/stop@mybot`, an alias), or None."""
    found = invocation(text)
    return found.built_in if found else None
