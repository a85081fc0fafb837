"""How trigger runs end: their outcome noted beside the delivery, and their reply for whoever waits (`--wait`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from bot.events import EventBus, TurnFinished, TurnStarted
from bot.storage.recent import RecentMap
from bot.triggers.deliveries import Deliveries

RUN_PREFIX = "trigger-"
"""Every trigger run id starts so (`delivery_ids.run_id`): a run resumed after a restart is still recognised."""
KEEP = 1000


@dataclass(frozen=True, slots=True)
class RunEnd:
    """How a run ended: the turn's outcome and its reply (empty when it sent none)."""

    outcome: str
    reply: str


class TriggerRuns:
    """Follows the turns that carry trigger runs, from the agent's events."""

    def __init__(self, book: Deliveries) -> None:
        self._book = book
        self._turns: dict[str, tuple[str, ...]] = {}
        self._ended: RecentMap[str, RunEnd] = RecentMap(KEEP)
        self._waiting: dict[str, asyncio.Event] = {}
        self._unsubscribe: Callable[[], None] = lambda: None

    def follow(self, events: EventBus) -> None:
        """Begin hearing turns start and end."""
        self._unsubscribe = events.subscribe(self._on_event, TurnStarted, TurnFinished)

    def stop(self) -> None:
        """Stop hearing them."""
        self._unsubscribe()

    async def wait(self, run_id: str, timeout: float) -> RunEnd | None:
        """The run's end once it came, or None after `timeout` seconds (the run goes on)."""
        if (ended := self._ended.get(run_id)) is not None:
            return ended
        done = self._waiting.setdefault(run_id, asyncio.Event())
        try:
            async with asyncio.timeout(timeout):
                await done.wait()
        except TimeoutError:
            return None
        finally:
            if not done.is_set():
                self._waiting.pop(run_id, None)
        return self._ended.get(run_id)

    def _on_event(self, event: object) -> None:
        if isinstance(event, TurnStarted):
            runs = tuple(i for i in event.message_ids or (event.turn_id,) if i.startswith(RUN_PREFIX))
            if runs:
                self._turns[event.turn_id] = runs
        elif isinstance(event, TurnFinished):
            for run in self._turns.pop(event.turn_id, ()):
                self._ended[run] = RunEnd(event.outcome, event.text if event.replied else "")
                self._book.finish(run, event.outcome)
                if (done := self._waiting.pop(run, None)) is not None:
                    done.set()
