"""Slack slash command names: relaybot's commands, renamed where Slack reserves the name for its own."""

from __future__ import annotations

RESERVED = frozenset(
    {
        "active", "apps", "archive", "away", "call", "collapse", "dm", "expand", "feed", "feedback", "help",
        "invite", "join", "kick", "leave", "me", "msg", "mute", "open", "remind", "remove", "rename", "search",
        "shortcuts", "shrug", "star", "status", "topic", "who",
    }
)  # fmt: skip
"""Slack's built-in commands (and `/help`, reserved before): an app command of that name is never routed to it."""

RENAMED_PREFIX = "relaybot-"


def slash_name(name: str) -> str:
    """The name a relaybot command gets in the Slack app: itself, or `relaybot-<name>` where Slack reserves it."""
    return f"{RENAMED_PREFIX}{name}" if name in RESERVED else name


def command_name(slash: str) -> str:
    """The relaybot command a Slack slash command (`/relaybot-status`, `/new`) stands for."""
    name = slash.lstrip("/").lower()
    renamed = name.removeprefix(RENAMED_PREFIX)
    return renamed if renamed != name and renamed in RESERVED else name
