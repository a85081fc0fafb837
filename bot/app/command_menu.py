"""The native command menu every chat channel offers: the built-in commands and the plugins'."""

from __future__ import annotations

import inspect

from bot.hooks.handlers import Hooks
from channels.base import CommandSpec

BUILT_IN = (
    CommandSpec("new", "Start a fresh conversation"),
    CommandSpec("stop", "Stop what I'm doing"),
    CommandSpec("status", "Model, persona, role, tokens and budget"),
    CommandSpec("model", "Show or switch this chat's model"),
    CommandSpec("usage", "Tokens and cost today and this month"),
    CommandSpec("sessions", "This chat's archived conversations"),
    CommandSpec("resume", "Resume an archived conversation: /resume N"),
    CommandSpec("help", "What I can do"),
    CommandSpec("approve", "Approve a waiting command: /approve CODE"),
    CommandSpec("deny", "Refuse a waiting command: /deny CODE"),
    CommandSpec("activation", "Groups: answer on mention or always", "groups"),
)
"""The built-in commands, in menu order; approve and deny stay listed even where nothing is waiting."""
PLUGIN_DESCRIPTION = "A plugin's command"


def command_menu(hooks: Hooks) -> list[CommandSpec]:
    """The built-in commands, then each plugin command (described by its handler's docstring's first line)."""
    menu = list(BUILT_IN)
    known = {spec.name for spec in menu}
    for name, handler in sorted(hooks.commands.items()):
        if name in known:
            continue
        doc = (inspect.getdoc(handler) or PLUGIN_DESCRIPTION).splitlines()[0]
        menu.append(CommandSpec(name, doc[:100]))
    return menu
