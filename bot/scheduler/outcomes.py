"""Outcomes of scheduled runs across processes: whichever process sees a cron or heartbeat run end tells the scheduler.

On the redis bus the leader publishes a run, a worker runs its turn and a gateway delivers the reply; each
process forwards the events that end a scheduled run (turn finished, reply delivered or failed) to a Redis
stream, and the scheduler's relay replays them onto its own `outcomes` event bus, where the cron service
and the heartbeat wait for them as they do on the local bus.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from bot.bus import ChatRef
from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState
from bot.events import Delivered, DeliveryFailed, Event, EventBus, TurnFinished

if TYPE_CHECKING:
    from redis.typing import EncodableT, FieldT, StreamRangeResponse

logger = logging.getLogger(__name__)

SCHEDULED = ("cron-", "heartbeat:")
"""The message id prefixes of scheduled runs (cron jobs and heartbeat beats)."""
KEEP = 10_000
BLOCK_MS = 1000
RETRY = 1.0

_KINDS: dict[str, type[Delivered] | type[DeliveryFailed] | type[TurnFinished]] = {
    "Delivered": Delivered,
    "DeliveryFailed": DeliveryFailed,
    "TurnFinished": TurnFinished,
}


def ends_scheduled_run(event: Event) -> bool:
    """Whether `event` ends a cron or heartbeat run: its turn finished, or its message was delivered or failed."""
    if isinstance(event, TurnFinished):
        ids: tuple[str | None, ...] = (event.turn_id,)
    elif isinstance(event, Delivered | DeliveryFailed):
        ids = (event.message_id, event.in_reply_to)
    else:
        return False
    return any(i and i.startswith(SCHEDULED) for i in ids)


def _decode(kind: str, body: str) -> Event | None:
    cls = _KINDS.get(kind)
    if cls is None:
        return None
    data: dict[str, Any] = json.loads(body)
    data["chat"] = ChatRef(**data["chat"])
    return cls(**data)


def _last_id(latest: StreamRangeResponse | None) -> str:
    """The id of the newest entry in an XREVRANGE reply, or the start of the stream when it is empty."""
    entry = latest[0][0] if latest else None
    return "0-0" if entry is None else as_text(entry)


class OutcomeRelay:
    """Forwards this process's scheduled-run outcomes to Redis; `listen` replays everyone's onto `outcomes`."""

    def __init__(self, state: RedisState, events: EventBus, outcomes: EventBus) -> None:
        self._state = state
        self._stream = state.key("sched", "outcomes")
        self._events = events
        self._outcomes = outcomes
        self._unsubscribe: Any = None
        self._writes: set[asyncio.Task[Any]] = set()
        self._reader: asyncio.Task[None] | None = None
        self._closing = False

    async def start(self, listen: bool = True) -> None:
        """Forward from now on; with `listen`, also replay (from the stream's current end) onto `outcomes`."""
        self._unsubscribe = self._events.subscribe(self._forward)
        if listen:
            latest = await self._state.aclient.xrevrange(self._stream, count=1)
            self._reader = asyncio.create_task(self._replay(_last_id(latest)), name="outcome-relay")

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        await asyncio.gather(*self._writes, return_exceptions=True)
        if self._reader is not None:
            self._closing = True  # redis-py may swallow a cancel that lands in a blocking read
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
            self._reader = None

    def _forward(self, event: Event) -> None:
        if not ends_scheduled_run(event):
            return
        fields: dict[FieldT, EncodableT] = {"kind": type(event).__name__, "body": json.dumps(asdict(event))}
        task = asyncio.get_running_loop().create_task(self._write(fields))
        self._writes.add(task)
        task.add_done_callback(self._written)

    async def _write(self, fields: dict[FieldT, EncodableT]) -> None:
        await self._state.aclient.xadd(self._stream, fields, maxlen=KEEP, approximate=True)

    def _written(self, task: asyncio.Task[Any]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("could not forward a scheduled run's outcome", exc_info=task.exception())

    async def _replay(self, after: str) -> None:
        from redis.exceptions import ConnectionError as Unreachable
        from redis.exceptions import TimeoutError as Unanswered

        while not self._closing:
            try:
                response = await self._state.aclient.xread({self._stream: after}, count=100, block=BLOCK_MS)
            except (Unreachable, Unanswered):
                logger.warning("the scheduled-run outcome stream is unreachable; retrying in %.0fs", RETRY)
                await asyncio.sleep(RETRY)
                continue
            assert isinstance(response, list), "RedisState's clients speak RESP2, where XREAD answers a list"
            for _, entries in response:
                for entry, fields in entries:
                    after = entry
                    event = _decode(fields.get("kind", ""), fields.get("body", "{}"))
                    if event is not None:
                        self._outcomes.emit(event)
