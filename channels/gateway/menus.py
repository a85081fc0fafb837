"""Native command menus: the command list handed to a channel that offers one, once it has started."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from bot.commands.catalogue import CommandSpec
from channels.abilities import OffersCommands
from channels.base import Channel

logger = logging.getLogger(__name__)


async def offer_commands(channel: Channel, commands: Sequence[CommandSpec], privileged: Sequence[str] = ()) -> None:
    """Give the channel its command menu (`privileged`: its owners' and admins' user ids); a failure is logged, the
    channel keeps working without one."""
    if not commands or not isinstance(channel, OffersCommands):
        return
    try:
        await channel.set_commands(commands, privileged)
    except Exception as exc:
        logger.warning("%s: could not set the command menu: %s", channel.key, exc)
    else:
        logger.info("%s: command menu set (%d commands)", channel.key, len(commands))
