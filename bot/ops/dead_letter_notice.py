"""The owner hears of new dead letters (messages not answered, replies not delivered) in one short DM, at most once
an hour (`ops.dead_letter_notice`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from bot.cancelling import cancel_and_wait
from bot.events import DeliveryFailed, EventBus, MessageFailed

logger = logging.getLogger(__name__)

NOTICE_EVERY = 3600.0


def notice_text(messages: int, replies: int) -> str:
    """The DM: how many new dead letters of each kind, and where to see them."""
    parts = []
    if messages:
        parts.append(f"{messages} message{'' if messages == 1 else 's'} could not be answered")
    if replies:
        parts.append(f"{replies} {'reply' if replies == 1 else 'replies'} could not be delivered")
    return f"{' and '.join(parts)}; they wait as dead letters: see them with `relaybot queue list`."


class DeadLetterNotice:
    """Counts messages and replies that became dead letters and sends the counts at most once per `every` seconds,
    the first at once; `clock` and `sleep` are injectable so tests need no waiting."""

    def __init__(
        self,
        events: EventBus,
        send: Callable[[str], Awaitable[None]],
        every: float = NOTICE_EVERY,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._events = events
        self._send = send
        self._every = every
        self._clock = clock
        self._sleep = sleep
        self._new = {MessageFailed: 0, DeliveryFailed: 0}
        self._last: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None

    def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self._failed, MessageFailed, DeliveryFailed)

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None

    def _failed(self, event: object) -> None:
        self._new[type(event)] += 1
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._notify(), name="dead-letter-notice")

    async def _notify(self) -> None:
        """Wait out the hour since the last notice, then send one for everything that failed meanwhile, until
        nothing new is left."""
        while any(self._new.values()):
            if self._last is not None and (wait := self._last + self._every - self._clock()) > 0:
                await self._sleep(wait)
            messages, replies = self._new[MessageFailed], self._new[DeliveryFailed]
            self._new = {MessageFailed: 0, DeliveryFailed: 0}
            self._last = self._clock()
            try:
                await self._send(notice_text(messages, replies))
            except Exception:
                logger.exception("could not send the owner the dead-letter notice")
