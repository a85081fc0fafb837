"""What every chat platform adapter is: start, stop, send (its optional abilities are in channels/abilities.py)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import ClassVar

from bot.bus import InboundMessage, OutboundMessage
from bot.bus.messages import channel_key

Publish = Callable[[InboundMessage], Awaitable[None]]


class Channel(ABC):
    """A platform adapter; it receives a `publish` callable and its own config section, nothing more."""

    name: ClassVar[str]
    account: str | None = None
    """Which of the platform's bots this instance is (`channels.<platform>.accounts`); None: the default bot."""

    @property
    def key(self) -> str:
        """How the gateway names this instance: `telegram`, or `telegram@work` for a named account."""
        return channel_key(self.name, self.account)

    def own(self, message: InboundMessage) -> InboundMessage:
        """`message` as this bot's: its chat names this instance's account, so replies go back through it."""
        if message.chat.account == self.account:
            return message
        return replace(message, chat=replace(message.chat, account=self.account))

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin publishing inbound messages; raise if the platform is unreachable."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and release everything started."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> None:
        """Deliver one message to its chat; raise ChannelError when it cannot be delivered."""
