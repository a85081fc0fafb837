"""Waiting for a scheduled run's message to be delivered: the outcome events matched to the run's message id."""

from __future__ import annotations

import asyncio

from bot.events import Delivered, DeliveryFailed, Event

Outcome = tuple[bool, str | None]
"""(delivered, the error when the run failed)."""


class DeliveryWaiters:
    """One future per run being watched, resolved by the Delivered or DeliveryFailed event naming its message."""

    def __init__(self) -> None:
        self._waiters: dict[str, asyncio.Future[Outcome]] = {}

    def expect(self, key: str) -> asyncio.Future[Outcome]:
        """A future resolved once the message `key` (or the reply to it) is delivered or fails."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._waiters[key] = future
        return future

    def forget(self, key: str) -> None:
        """Stop watching `key`."""
        self._waiters.pop(key, None)

    def on_event(self, event: Event) -> None:
        """Resolve the run an outcome event names."""
        if isinstance(event, Delivered):
            result: Outcome = (True, "the agent answered with an error" if event.kind == "error" else None)
        elif isinstance(event, DeliveryFailed):
            result = (False, event.error)
        else:
            return
        for key in (event.message_id, event.in_reply_to):
            future = self._waiters.get(key or "")
            if future and not future.done():
                future.set_result(result)
