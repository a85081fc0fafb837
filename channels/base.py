"""What every chat platform adapter is: start, stop, send; plus the optional typing ability."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from typing import ClassVar, Protocol, runtime_checkable

from bot.bus import ChatRef, InboundMessage, OutboundMessage

Publish = Callable[[InboundMessage], Awaitable[None]]


class Channel(ABC):
    """A platform adapter; it receives a `publish` callable and its own config section, nothing more."""

    name: ClassVar[str]

    @abstractmethod
    async def start(self) -> None:
        """Connect and begin publishing inbound messages; raise if the platform is unreachable."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and release everything started."""

    @abstractmethod
    async def send(self, message: OutboundMessage) -> None:
        """Deliver one message to its chat; raise ChannelError when it cannot be delivered."""


@runtime_checkable
class ShowsTyping(Protocol):
    """A channel that can show a typing indicator in a chat."""

    async def show_typing(self, chat: ChatRef) -> None: ...
