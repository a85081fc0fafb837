"""What every chat platform adapter is: start, stop, send."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import ClassVar

from bot.bus import InboundMessage, OutboundMessage

Publish = Callable[[InboundMessage], Awaitable[None]]


class Channel(ABC):
    """A platform adapter; it receives a `publish` callable and its own config section, nothing more."""

    name: ClassVar[str]

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin publishing inbound messages."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and release everything started."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> None:
        """Deliver one message to its chat."""
