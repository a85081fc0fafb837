"""Telegram's command menu: one list for private chats and one for groups, sent only when it changed."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

from bot.errors import ChannelError
from channels.base import CommandSpec
from channels.streaming import PlatformCall

logger = logging.getLogger(__name__)


def menus_by_scope(commands: Sequence[CommandSpec]) -> dict[str, list[tuple[str, str]]]:
    """The (name, description) lists for private chats and for groups; a command offered "all" goes in both."""
    menus: dict[str, list[tuple[str, str]]] = {"private": [], "groups": []}
    for command in commands:
        for scope in ("private", "groups"):
            if command.scope in ("all", scope):
                menus[scope].append((command.name.lower(), command.description[:256]))
    return menus


async def offer_commands(bot: Any, call: PlatformCall, commands: Sequence[CommandSpec]) -> int:
    """Make each scope's menu match `commands`: ask Telegram for the current one, set it only when it differs.

    Returns how many menus were sent."""
    from telegram import BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

    scopes = {"private": BotCommandScopeAllPrivateChats(), "groups": BotCommandScopeAllGroupChats()}
    sent = 0
    for name, wanted in menus_by_scope(commands).items():
        scope = scopes[name]
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
