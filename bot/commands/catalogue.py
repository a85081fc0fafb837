"""Every built-in command, declared once: /help, the native menus, the Slack manifest and parsing all read this."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from bot.bus import InboundMessage, Trust

Place = Literal["console", "direct", "group"]
"""Where a command is typed: the terminal chat, a direct message on a platform, or a group (channel, thread)."""
CONSOLE_CHANNEL = "console"
EVERYWHERE: frozenset[Place] = frozenset({"console", "direct", "group"})
PLATFORM_CHATS: frozenset[Place] = frozenset({"direct", "group"})
Answered = Literal["gate", "roster", "lane", "loop", "terminal"]
"""Where a command is answered: the access gate, the agents' roster, the session's lane, the agent loop at once, or
the terminal chat itself."""


@dataclass(frozen=True, slots=True)
class BuiltIn:
    """One built-in command: its name, what menus and /help say, where it applies and the lowest role that may use it.

    `listed` is False for `/start`, which platforms send themselves: /help and the menus leave it out. `answered` is
    the one place that answers it (a `CommandRouter` of that place holds its handler); `heard` says the plugins'
    `command` hook hears it as it arrives, before it acts; `urgent` that it is answered before a waiting prompt could
    take it as its answer."""

    name: str
    summary: str  # a native menu's line, at most 100 characters (Slack's and Discord's limit)
    help: str  # /help's line after the command and its arguments
    args: str = ""  # what follows the name, as /help shows it
    places: frozenset[Place] = EVERYWHERE
    role: Trust = Trust.GUEST
    aliases: tuple[str, ...] = ()
    listed: bool = True
    answered: Answered = "loop"
    heard: bool = False
    urgent: bool = False
    words: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "words", frozenset({self.name, *self.aliases}))

    def usable(self, place: Place, role: Trust) -> bool:
        """Whether a sender of `role` may use this command in a chat at `place`."""
        return place in self.places and role.at_least(self.role)


NEW = BuiltIn(
    "new",
    "Start a fresh conversation",
    "start a fresh conversation (what matters is kept in memory)",
    aliases=("reset",),
    answered="lane",
    heard=True,
)
STOP = BuiltIn("stop", "Stop what I'm doing", "stop what I'm doing right now", heard=True, urgent=True)
STATUS = BuiltIn(
    "status",
    "Model, persona, role, tokens and budget",
    "your role, model, persona, conversation length, tokens used and budget left",
)
MODEL = BuiltIn(
    "model",
    "Show or switch this chat's model",
    "this chat's model and the others; /model NAME switches (admins), /model default goes back",
    args="[NAME]",
)
USAGE = BuiltIn(
    "usage", "Tokens and cost today and this month", "your and this chat's tokens and cost today and this month"
)
SESSIONS = BuiltIn(
    "sessions",
    "This chat's archived conversations",
    "this chat's archived conversations; /resume N makes one the live conversation again",
)
RESUME = BuiltIn(
    "resume",
    "Resume an archived conversation: /resume N",
    "make archived conversation N live again",
    args="N",
    answered="lane",
)
HELP = BuiltIn("help", "What I can do", "this list")
AGENT = BuiltIn(
    "agent",
    "Which agent answers here",
    "which of this gateway's agents answers in this chat, and why",
    answered="roster",
)
APPROVE = BuiltIn(
    "approve",
    "Approve a waiting command: /approve CODE",
    "run a command waiting for approval (add `always` to stop asking for it)",
    args="CODE",
    role=Trust.ADMIN,
)
DENY = BuiltIn(
    "deny",
    "Refuse a waiting command: /deny CODE",
    "refuse a command waiting for approval",
    args="CODE",
    role=Trust.ADMIN,
)
ACTIVATION = BuiltIn(
    "activation",
    "Groups: answer on mention or always",
    "answer here only when mentioned, or every message (anyone may ask which holds)",
    args="mention|always",
    places=frozenset({"group"}),
    role=Trust.ADMIN,
    answered="gate",
)
PAIR = BuiltIn(
    "pair",
    "Let a sender in or out: /pair approve CODE",
    "let a sender in, or out",
    args="approve CODE | revoke ID",
    places=PLATFORM_CHATS,
    role=Trust.ADMIN,
)
START = BuiltIn("start", "Say hello", "a greeting", listed=False)
FILE = BuiltIn(
    "file",
    "Send a file from this machine",
    "send a file from this machine, with words for the bot after it",
    args="PATH [text]",
    places=frozenset({"console"}),
    role=Trust.OWNER,
    answered="terminal",
)
EXIT = BuiltIn(
    "exit",
    "Leave the terminal chat",
    "leave the terminal chat (Ctrl-D too)",
    places=frozenset({"console"}),
    aliases=("quit",),
    answered="terminal",
)

BUILT_INS: tuple[BuiltIn, ...] = (
    NEW,
    STOP,
    STATUS,
    MODEL,
    USAGE,
    SESSIONS,
    RESUME,
    HELP,
    AGENT,
    APPROVE,
    DENY,
    ACTIVATION,
    PAIR,
    START,
    FILE,
    EXIT,
)
"""The built-in commands in the order /help and the menus list them."""
_BY_WORD = {word: command for command in BUILT_INS for word in command.words}


def built_in(word: str) -> BuiltIn | None:
    """The built-in command a word names (its name or an alias, any case, no slash), or None."""
    return _BY_WORD.get(word.lower())


def reserved_words() -> frozenset[str]:
    """Every name and alias of a built-in command: no plugin command may take one."""
    return frozenset(_BY_WORD)


def place_of(message: InboundMessage) -> Place:
    """Where a message was typed: the terminal chat, a direct message, or a group."""
    if message.chat.channel == CONSOLE_CHANNEL:
        return "console"
    return "direct" if message.is_direct else "group"


def usable_here(place: Place, role: Trust) -> Iterator[BuiltIn]:
    """The built-in commands a sender of `role` may use at `place`, in catalogue order."""
    return (command for command in BUILT_INS if command.listed and command.usable(place, role))


def in_menus() -> Iterator[BuiltIn]:
    """The built-in commands a platform's native menu offers (those of its chats), in catalogue order."""
    return (command for command in BUILT_INS if command.listed and command.places & PLATFORM_CHATS)


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command for a platform's native menu: its name (no slash), a short description, where it is offered,
    and the lowest role that may use it (a menu shows `privileged` commands only to those who may)."""

    name: str
    description: str
    scope: Literal["all", "private", "groups"] = "all"
    role: Trust = Trust.GUEST

    @property
    def privileged(self) -> bool:
        """Whether only admins and owners may use it."""
        return self.role.at_least(Trust.ADMIN)
