"""Telegram's command menus, each sent only when it changed: everyone's in private chats and in groups; the
privileged commands besides in each owner's and admin's private chat and for group administrators."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

from bot.commands.catalogue import CommandSpec
from bot.errors import ChannelError
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)

Menu = list[tuple[str, str]]


def menus_by_scope(commands: Sequence[CommandSpec]) -> dict[str, Menu]:
    """The (name, description) lists for private chats and groups, each for everyone and with the privileged ones;
    a command offered "all" goes in both kinds of chat."""
    menus: dict[str, Menu] = {"private": [], "groups": [], "private+": [], "groups+": []}
    for command in commands:
        for chats in ("private", "groups"):
            if command.scope in ("all", chats):
                line = (command.name.lower(), command.description[:256])
                menus[f"{chats}+"].append(line)
                if not command.privileged:
                    menus[chats].append(line)
    return menus


def scoped_menus(commands: Sequence[CommandSpec], privileged: Sequence[str]) -> list[tuple[str, Any, Menu]]:
    """(name, BotCommandScope, menu) for every menu to send: the privileged ones only when they differ."""
    from telegram import (
        BotCommandScopeAllChatAdministrators,
        BotCommandScopeAllGroupChats,
        BotCommandScopeAllPrivateChats,
        BotCommandScopeChat,
    )

    menus = menus_by_scope(commands)
    scoped: list[tuple[str, Any, Menu]] = [
        ("private", BotCommandScopeAllPrivateChats(), menus["private"]),
        ("groups", BotCommandScopeAllGroupChats(), menus["groups"]),
    ]
    if menus["groups+"] != menus["groups"]:
        scoped.append(("group administrators'", BotCommandScopeAllChatAdministrators(), menus["groups+"]))
    if menus["private+"] != menus["private"]:
        for user in privileged:
            if user.lstrip("-").isdigit():  # a private chat's id is its user's
                scoped.append((f"chat {user}'s", BotCommandScopeChat(int(user)), menus["private+"]))
    return scoped


async def offer_commands(
    bot: Any, call: PlatformCall, commands: Sequence[CommandSpec], privileged: Sequence[str]
) -> int:
    """Make each scope's menu match `commands`: ask Telegram for the current one, set it only when it differs.

    Returns how many menus were sent."""
    sent = 0
    for name, scope, wanted in scoped_menus(commands, privileged):
        try:
            current = await call(partial(bot.get_my_commands, scope=scope))
        except ChannelError as exc:
            logger.info("telegram: could not read the %s command menu (%s); setting it", name, exc)
            current = None
        if current is not None and [(c.command, c.description) for c in current] == wanted:
            continue
        await call(partial(bot.set_my_commands, wanted, scope=scope))
        logger.info("telegram: %s command menu set (%d commands)", name, len(wanted))
        sent += 1
    return sent
