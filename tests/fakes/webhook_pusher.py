"""A fake platform that serves its API on loopback and POSTs what its users do to the bot's webhook, in order."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Self

from tests.fakes.loopback import LoopbackServer


class WebhookPusher(LoopbackServer):
    """`push` queues a webhook body; while entered, one task hands the queue to `deliver`, one body at a time."""

    def __init__(self) -> None:
        super().__init__()
        self.webhook_url = ""  # where `deliver` posts, set by the test once the bot serves
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._pusher: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        await super().__aenter__()
        self._pusher = asyncio.create_task(self._push_in_order())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._pusher is not None:
            self._pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pusher
        await super().__aexit__(*exc_info)

    def push(self, payload: dict[str, Any]) -> None:
        """Queue a webhook body; the pusher delivers the queue in order."""
        self._queue.put_nowait(payload)

    async def deliver(self, payload: dict[str, Any]) -> int:
        """POST `payload` to the bot's webhook, signed as the platform signs it; the bot's HTTP status."""
        raise NotImplementedError

    async def _push_in_order(self) -> None:
        while True:
            await self.deliver(await self._queue.get())
