"""What the bot shows on Discord besides text: buttons for choices, and application (slash) command definitions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bot.bus import Choice
from bot.commands.catalogue import CommandSpec
from channels.discord.interactions import choice_custom_id

BUTTONS_PER_ROW, MAX_BUTTONS = 5, 25
LABEL_LIMIT, DESCRIPTION_LIMIT = 80, 100
GUILD, BOT_DM = 0, 1  # interaction contexts
_CONTEXTS = {"all": [GUILD, BOT_DM], "private": [BOT_DM], "groups": [GUILD]}
_STYLES = {"default": 2, "primary": 1, "danger": 4}  # secondary, primary, danger
ARGS_OPTION = {"type": 3, "name": "args", "description": "what follows the command", "required": False}
ADMINISTRATORS_ONLY = "0"  # no permission bit: in a server, only its administrators see and use the command


def choice_view(prompt_id: str, choices: Sequence[Choice]) -> Any:
    """A discord.ui.View of one button per choice, five to a row; presses arrive as interactions, not callbacks."""
    from discord import ButtonStyle
    from discord.ui import Button, View

    view = View(timeout=None)
    for index, choice in enumerate(choices[:MAX_BUTTONS]):
        view.add_item(
            Button(
                label=choice.label[:LABEL_LIMIT],
                custom_id=choice_custom_id(prompt_id, choice.id),
                style=ButtonStyle(_STYLES[choice.style]),
                row=index // BUTTONS_PER_ROW,
            )
        )
    # A stopped view still renders; discord.py then keeps no callback registry for it (the adapter handles presses).
    view.stop()
    return view


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
