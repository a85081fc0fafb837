"""Discord's command menu: application (slash) command definitions, and whether the registered ones still match."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.commands.catalogue import CommandSpec

DESCRIPTION_LIMIT = 100
GUILD, BOT_DM = 0, 1  # interaction contexts
_CONTEXTS = {"all": [GUILD, BOT_DM], "private": [BOT_DM], "groups": [GUILD]}
ARGS_OPTION = {"type": 3, "name": "args", "description": "what follows the command", "required": False}
ADMINISTRATORS_ONLY = "0"  # no permission bit: in a server, only its administrators see and use the command


def command_payloads(commands: Sequence[CommandSpec], in_guild: bool) -> list[dict[str, Any]]:
    """Slash command definitions, each taking its arguments as one optional text; guild ones skip DM-only commands.

    A privileged command is hidden in servers from all but their administrators (`default_member_permissions` "0",
    as discord.py's `app_commands.default_permissions()` with no permission sends); Discord cannot scope DM menus."""
    payloads = []
    for command in commands:
        if in_guild and command.scope == "private":
            continue
        payload: dict[str, Any] = {
            "type": 1,
            "name": command.name.lower()[:32],
            "description": (command.description or command.name)[:DESCRIPTION_LIMIT],
            "options": [ARGS_OPTION],
        }
        if not in_guild:
            payload["contexts"] = _CONTEXTS[command.scope]
        if command.privileged:
            payload["default_member_permissions"] = ADMINISTRATORS_ONLY
        payloads.append(payload)
    return payloads


def same_commands(registered: Sequence[Mapping[str, Any]], wanted: Sequence[Mapping[str, Any]]) -> bool:
    """Whether Discord already has exactly these commands (names, descriptions, options, contexts, permissions)."""

    def shape(command: Mapping[str, Any]) -> tuple[Any, ...]:
        options = tuple(option.get("name") for option in command.get("options") or ())
        contexts = tuple(sorted(command.get("contexts") or ()))
        permissions = command.get("default_member_permissions")  # Discord answers with a string, or null
        return (
            command.get("name"),
            command.get("description"),
            options,
            contexts,
            None if permissions is None else str(permissions),
        )

    return sorted(map(shape, registered)) == sorted(map(shape, wanted))
