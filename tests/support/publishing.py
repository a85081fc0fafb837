"""A channel's `publish` callable for adapter tests: records what the channel published, awaitable."""

from __future__ import annotations

from bot.bus import InboundMessage
from tests.fakes.waiting import RecordWaiter


class Published:
    """A channel's publish callable that records what it was handed."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self._recorded = RecordWaiter()

    async def __call__(self, message: InboundMessage) -> None:
        self.messages.append(message)
        await self._recorded.notify()

    async def wait_for(self, n: int, timeout: float = 10) -> list[InboundMessage]:
        """The first `n` published messages, once that many exist."""
        await self._recorded.wait_until(lambda: len(self.messages) >= n, timeout, lambda: f"{self.messages}")
        return self.messages[:n]
