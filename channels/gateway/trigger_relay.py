"""The chats of triggers' own sessions (`trigger:<name>`): what the agent says there goes on to the trigger's chat."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import ClassVar

from bot.bus import ChatRef, OutboundMessage
from bot.errors import ChannelError
from channels.base import Channel

Forward = Callable[[OutboundMessage], Awaitable[bool]]


class TriggerRelay(Channel):
    """Sends nothing itself: each reply, notice or file is journaled again toward the chat its trigger names."""

    name: ClassVar[str] = "trigger"

    def __init__(self, targets: Mapping[str, ChatRef], forward: Forward) -> None:
        """`targets` maps each trigger's name to its chat; `forward` publishes an outbound message (the bus's)."""
        self._targets = dict(targets)
        self._forward = forward

    async def start(self) -> None:
        """Nothing to connect."""

    async def stop(self) -> None:
        """Nothing to release."""

    async def send(self, message: OutboundMessage) -> None:
        """Pass the message on to the trigger's chat (progress notes stay behind); its id makes that once."""
        target = self._targets.get(message.chat.chat_id)
        if target is None:
            raise ChannelError(f"no trigger {message.chat.chat_id!r} is configured")
        if message.kind == "progress":
            return
        relayed = replace(
            message,
            chat=target,
            id=f"{message.id}:relayed",
            reply_to_platform_id=None,
            finalises=None,
            choices=(),
            prompt_id=None,
            edit_of=None,
            revises_reply_to=None,
            private_to=None,
        )
        await self._forward(relayed)
