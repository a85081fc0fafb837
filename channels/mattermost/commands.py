"""Mattermost slash command triggers: relaybot's commands, renamed where Mattermost has a built-in of that name."""

from __future__ import annotations

RESERVED = frozenset(
    {
        "away", "code", "collapse", "dnd", "echo", "expand", "groupmsg", "header", "help", "invite",
        "invite_people", "join", "kick", "leave", "logout", "me", "msg", "mute", "offline", "online", "open",
        "purpose", "remove", "rename", "search", "settings", "shortcuts", "shrug", "status",
    }
)  # fmt: skip
"""Mattermost's built-in commands: a custom command may not take their trigger."""

RENAMED_PREFIX = "relaybot-"


def trigger_of(name: str) -> str:
    """The trigger a relaybot command gets: itself, or `relaybot-<name>` where Mattermost has a built-in."""
    return f"{RENAMED_PREFIX}{name}" if name in RESERVED else name


def command_name(command: str) -> str:
    """The relaybot command a slash command (`/relaybot-status`, `/new`) stands for."""
    name = command.lstrip("/").lower()
    renamed = name.removeprefix(RENAMED_PREFIX)
    return renamed if renamed != name and renamed in RESERVED else name
