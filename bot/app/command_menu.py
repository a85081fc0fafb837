"""The native command menu every chat channel offers: the catalogue's built-in commands, then the plugins'."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING

from bot.bus import Trust
from bot.commands.catalogue import BuiltIn, CommandSpec, in_menus, reserved_words
from bot.hooks.handlers import Hooks

if TYPE_CHECKING:
    from bot.config.schema import Config

PLUGIN_DESCRIPTION = "A plugin's command"


def menu_entry(command: BuiltIn) -> CommandSpec:
    """A built-in command as a menu line, offered in the kinds of chat it applies to, to the lowest role it names."""
    if "group" not in command.places:
        return CommandSpec(command.name, command.summary, "private", command.role)
    return CommandSpec(command.name, command.summary, "all" if "direct" in command.places else "groups", command.role)


def built_in_menu() -> list[CommandSpec]:
    """The built-in commands a platform's menu offers, in catalogue order."""
    return [menu_entry(command) for command in in_menus()]


def command_menu(hooks: Hooks) -> list[CommandSpec]:
    """The built-in commands, then each plugin command (described by its handler's docstring's first line)."""
    menu = built_in_menu()
    reserved = reserved_words()  # a handler under a built-in name (only the plugin api refuses one) is listed once
    for name, handler in sorted(hooks.commands.items()):
        if name in reserved:
            continue
        doc = (inspect.getdoc(handler) or PLUGIN_DESCRIPTION).splitlines()[0]
        menu.append(CommandSpec(name, doc[:100]))
    return menu


def menu_users(config: Config, channel: str) -> tuple[str, ...]:
    """The user ids on `channel` of the owners and admins (`owners`, `roles`, people's accounts): their chats'
    menus also list the commands only they may use."""
    people = config.identities
    privileged = set(config.owner_accounts())
    for name, role in config.roles.items():
        if role.at_least(Trust.ADMIN):
            privileged.update(people.get(name, [name]))
    prefix = f"{channel}:"
    return tuple(sorted(account.removeprefix(prefix) for account in privileged if account.startswith(prefix)))
