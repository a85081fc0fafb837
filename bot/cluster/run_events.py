"""Run events across processes: the turn events a worker emits reach the gateways that serve the API channel.

On the redis bus a gateway's API channel starts runs that workers carry out. Each worker appends the events a
run is watched by (lifecycle, text, tools, usage, sub-agents) to one Redis stream, in order, from one writer;
each gateway replays the stream from its end at start onto the event bus its API channel listens to. The
events are a view of the runs: one lost while Redis is away is logged, never waited for.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import asdict, fields
from typing import TYPE_CHECKING, Any

from bot.bus import ChatRef
from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState
from bot.events import (
    Event,
    EventBus,
    HeartbeatTicked,
    LLMCalled,
    MessageFailed,
    ReasoningDelta,
    ReplyDropped,
    StreamDelta,
    StreamEnded,
    StreamStarted,
    SubagentCompleted,
    SubagentSpawned,
    ToolCalled,
    ToolFinished,
    ToolUpdated,
    TurnFinished,
    TurnStarted,
)

if TYPE_CHECKING:
    from redis.typing import EncodableT, FieldT

logger = logging.getLogger(__name__)

FORWARDED: dict[str, type[Any]] = {
    kind.__name__: kind
    for kind in (
        TurnStarted,
        TurnFinished,
        LLMCalled,
        StreamStarted,
        StreamDelta,
        StreamEnded,
        ReasoningDelta,
        ToolCalled,
        ToolUpdated,
        ToolFinished,
        ReplyDropped,
        SubagentSpawned,
        SubagentCompleted,
        HeartbeatTicked,
        MessageFailed,
    )
}
"""The events a run's watchers (and an owner's socket, for the heartbeat; the gateway's dead-letter notice, for a
worker's failed messages) see, by name: what a worker forwards."""
KEEP = 10_000
"""Stream entries kept (approximately): a gateway reads from the end, so only a moment's worth matters."""
BACKLOG = 10_000
"""Events waiting for Redis at most; beyond it new ones are dropped (and logged once) until it drains."""
BLOCK_MS = 1000
RETRY = 1.0


def encode(event: Event) -> dict[FieldT, EncodableT]:
    """One stream entry: the event's kind and its fields as JSON."""
    return {"kind": type(event).__name__, "body": json.dumps(asdict(event))}


def decode(kind: str, body: str) -> Event | None:
    """The event an entry holds, or None for a kind this process does not replay."""
    cls = FORWARDED.get(kind)
    if cls is None:
        return None
    data: dict[str, Any] = json.loads(body)
    known = {field.name for field in fields(cls)}
    data = {name: value for name, value in data.items() if name in known}  # a newer worker's extra fields
    if isinstance(data.get("chat"), dict):
        data["chat"] = ChatRef(**data["chat"])
    for name, value in data.items():
        if isinstance(value, list):
            data[name] = tuple(value)
    event: Event = cls(**data)
    return event


class RunEventRelay:
    """Forwards this process's run events to Redis, or replays everyone's onto a local event bus."""

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._stream = state.key("events", "runs")
        self._queue: asyncio.Queue[Event] = asyncio.Queue()
        self._unsubscribe: Any = None
        self._task: asyncio.Task[None] | None = None
        self._dropping = False
        self._closing = False

    async def forward(self, events: EventBus) -> None:
        """From now on, send the run events emitted on `events` to the stream, in the order they were emitted."""
        self._unsubscribe = events.subscribe(self._enqueue, *FORWARDED.values())
        self._task = asyncio.create_task(self._write(), name="run-events-forward")

    async def replay(self, onto: EventBus) -> None:
        """From the stream's current end on, emit every forwarded event onto `onto`."""
        latest = await self._state.aclient.xrevrange(self._stream, count=1)
        newest = latest[0][0] if latest else None
        after = "0-0" if newest is None else as_text(newest)
        self._task = asyncio.create_task(self._read(after, onto), name="run-events-replay")

    async def stop(self) -> None:
        """Stop forwarding (what is queued is given a moment to go out) or replaying."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task is None:
            return
        if not self._queue.empty():
            await asyncio.wait([asyncio.ensure_future(self._queue.join())], timeout=RETRY)
        self._closing = True  # redis-py may swallow a cancel that lands in a blocking read
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None

    def _enqueue(self, event: Event) -> None:
        if self._queue.qsize() >= BACKLOG:
            if not self._dropping:
                logger.warning("run events wait for Redis; newer ones are dropped until it answers")
            self._dropping = True
            return
        self._dropping = False
        self._queue.put_nowait(event)

    async def _write(self) -> None:
        """One writer, whole batches in one pipeline: the stream keeps the order the events were emitted in."""
        from redis.exceptions import RedisError

        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                async with self._state.aclient.pipeline(transaction=False) as pipe:
                    for event in batch:
                        pipe.xadd(self._stream, encode(event), maxlen=KEEP, approximate=True)
                    await pipe.execute()
            except RedisError as exc:
                logger.error("could not forward %d run events: %s", len(batch), exc)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _read(self, after: str, onto: EventBus) -> None:
        from redis.exceptions import ConnectionError as Unreachable
        from redis.exceptions import TimeoutError as Unanswered

        while not self._closing:
            try:
                response = await self._state.aclient.xread({self._stream: after}, count=500, block=BLOCK_MS)
            except (Unreachable, Unanswered):
                logger.warning("the run event stream is unreachable; retrying in %.0fs", RETRY)
                await asyncio.sleep(RETRY)
                continue
            assert isinstance(response, list), "RedisState's clients speak RESP2, where XREAD answers a list"
            for _, entries in response:
                for entry, entry_fields in entries:
                    after = as_text(entry)
                    kind, body = entry_fields.get("kind") or "", entry_fields.get("body") or "{}"
                    event = decode(as_text(kind), as_text(body))
                    if event is not None:
                        onto.emit(event)
