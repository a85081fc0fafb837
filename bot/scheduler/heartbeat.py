"""The heartbeat: every so often the bot reads HEARTBEAT.md and acts on it, speaking only when it matters."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.bus import ChatRef, InboundMessage, Trust, new_id
from bot.cancelling import cancel_and_wait
from bot.config.schema import HeartbeatConfig
from bot.events import Delivered, DeliveryFailed, Event, EventBus, HeartbeatTicked, LLMCalled, TurnFinished
from bot.scheduler.heartbeat_ack import HEARTBEAT_OK
from bot.scheduler.heartbeat_record import HeartbeatRecord

logger = logging.getLogger(__name__)

DELIVERY_TIMEOUT = 900.0
REFUSALS_TO_PAUSE = 3
"""Heartbeat runs in a row whose key the provider refused (401/403) before the heartbeat pauses."""
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_INERT_LINE = re.compile(r"^\s*(#.*|[-*+]\s*\[ ?\]\s*|[-*+]\s*\[[xX]\].*|[-*+]\s*|>\s*)?$")
PROMPT = (
    "This is a scheduled heartbeat check. Read the tasks below from HEARTBEAT.md and act on any "
    f"that are due now. If nothing needs the owner's attention, reply with exactly {HEARTBEAT_OK}. "
    "Otherwise reply with what the owner should know.\n\n{tasks}"
)


class Outcome(StrEnum):
    """What one heartbeat run did."""

    OFF_HOURS = "outside active hours"
    NOTHING_TO_DO = "nothing to do"
    NO_TARGET = "skipped: no deliver_to and no owner has written in a direct chat yet"
    BUSY = "target chat busy"
    ALREADY_RAN = "this beat was journaled before; not run again"
    QUIET = "HEARTBEAT_OK, nothing delivered"
    DELIVERED = "delivered"
    FAILED = "failed"
    PAUSED = "paused: the background budget is used up"
    KEY_REFUSED = "failed: the model refused the API key"
    KEY_PAUSED = "paused: the model refused the API key; resumes after the next successful model call"


def actionable(text: str) -> bool:
    """Whether HEARTBEAT.md holds anything beyond headings, comments, blank lines and empty or done checkboxes."""
    return any(not _INERT_LINE.match(line) for line in _COMMENT.sub("", text).splitlines())


def within_hours(window: str | None, now: datetime) -> bool:
    """Whether `now` falls inside `HH:MM-HH:MM` (a window may wrap past midnight)."""
    if window is None:
        return True
    start, end = window.split("-")
    minute = now.hour * 60 + now.minute
    begin = int(start[:2]) * 60 + int(start[3:])
    finish = int(end[:2]) * 60 + int(end[3:])
    return begin <= minute < finish if begin <= finish else minute >= begin or minute < finish


class HeartbeatService:
    """Runs `tick` every `heartbeat.interval`; each run is logged with its outcome.

    A beat is a system message on the inbox, journaled like any other, so the agent loop runs it in the
    target chat's session (and again after a crash); the outcome is read from the turn's events. Without
    `deliver_to` it goes to `last_owner_chat()`; it skips a beat while `is_busy(session_key)`; `publish` puts
    it on the inbox (False: journaled before).
    """

    def __init__(
        self,
        config: HeartbeatConfig,
        workspace: Path,
        timezone: str,
        last_owner_chat: Callable[[], ChatRef | None],
        is_busy: Callable[[str], bool],
        publish: Callable[[InboundMessage], Awaitable[bool]],
        events: EventBus,
        clock: Callable[[], float] = time.time,
        record: HeartbeatRecord | None = None,
        outcomes: EventBus | None = None,
        name: str | None = None,
    ) -> None:
        self._config = config
        self._name = name  # a further agent's: its beats' ids and log lines carry it, apart from the default's
        self._file = workspace / "HEARTBEAT.md"
        self._zone = ZoneInfo(timezone)
        self._last_owner_chat = last_owner_chat
        self._is_busy = is_busy
        self._publish = publish
        self._outcomes = outcomes or events  # on the redis bus: relayed from whichever process saw the run end
        self._clock = clock
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._waiters: dict[str, asyncio.Future[Outcome]] = {}
        self._record = record or HeartbeatRecord()
        self._events = events
        self._refusals = 0
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def _id_prefix(self) -> str:
        return f"heartbeat:{self._name}:" if self._name else "heartbeat:"

    @property
    def last_run(self) -> float | None:
        """When the heartbeat last ran (in any process, on the redis backend)."""
        last = self._record.last()
        return last[0] if last else None

    @property
    def last_outcome(self) -> Outcome | None:
        """What came of the last run."""
        last = self._record.last()
        return Outcome(last[1]) if last else None

    @property
    def paused_for_key(self) -> bool:
        """Whether the heartbeat waits for a successful model call after the provider refused its key."""
        return self._refusals >= REFUSALS_TO_PAUSE

    async def start(self) -> None:
        self._unsubscribe = self._events.subscribe(self._on_model_call, LLMCalled)
        if self._config.enabled:
            self._stop.clear()
            self._task = asyncio.create_task(self._every_interval(), name="heartbeat")

    async def stop(self) -> None:
        self._stop.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._task:
            await cancel_and_wait(self._task)
            self._task = None

    async def reconfigure(self, config: HeartbeatConfig) -> None:
        """Take new settings; a running heartbeat restarts its interval with them (a config reload)."""
        running = self._unsubscribe is not None
        if running:
            await self.stop()
        self._config = config
        if running:
            await self.start()

    async def tick(self, due: float | None = None) -> Outcome:
        """One heartbeat: maybe publish its system message; `due` (the beat's slot) makes its id, so it runs once."""
        outcome = Outcome.KEY_PAUSED if self.paused_for_key else await self._beat(due)
        self._count_refusal(outcome)
        self._record.save(self._clock(), outcome.value)
        logger.info("heartbeat%s: %s", f" of agent {self._name}" if self._name else "", outcome.value)
        self._events.emit(HeartbeatTicked(outcome.value))
        return outcome

    def _count_refusal(self, outcome: Outcome) -> None:
        if outcome is Outcome.KEY_PAUSED:
            return
        if outcome is not Outcome.KEY_REFUSED:
            self._refusals = 0
            return
        self._refusals += 1
        if self.paused_for_key:
            logger.error(
                "heartbeat paused: the model refused the API key %d times in a row (check llm.api_key); "
                "it resumes after the next successful model call",
                self._refusals,
            )

    def _on_model_call(self, event: Event) -> None:
        """A successful model call anywhere in this process proves the key works again."""
        if isinstance(event, LLMCalled) and event.outcome == "ok" and self._refusals:
            if self.paused_for_key:
                logger.info("heartbeat resumed: a model call succeeded")
            self._refusals = 0

    async def _every_interval(self) -> None:
        interval = self._config.interval
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), interval)
                return
            except TimeoutError:
                pass
            try:
                await self.tick(self._clock() // interval * interval)
            except Exception:
                logger.exception("heartbeat run crashed")

    async def _beat(self, due: float | None) -> Outcome:
        if not within_hours(self._config.active_hours, datetime.fromtimestamp(self._clock(), self._zone)):
            return Outcome.OFF_HOURS
        tasks = self._file.read_text(encoding="utf-8") if self._file.exists() else ""
        if not actionable(tasks):
            return Outcome.NOTHING_TO_DO
        target = ChatRef.parse(self._config.deliver_to) if self._config.deliver_to else self._last_owner_chat()
        if target is None:
            return Outcome.NO_TARGET
        if self._is_busy(target.session_key):
            return Outcome.BUSY
        message = InboundMessage(
            target,
            sender_id="heartbeat",
            text=PROMPT.format(tasks=tasks.strip()),
            trust=Trust.OWNER,
            kind="system",
            origin="heartbeat",
            id=f"{self._id_prefix}{int(due)}" if due is not None else f"{self._id_prefix}{new_id()}",
        )
        waiter: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self._waiters[message.id] = waiter
        unsubscribe = self._outcomes.subscribe(self._on_event, TurnFinished, Delivered, DeliveryFailed)
        try:
            if not await self._publish(message):
                return Outcome.ALREADY_RAN
            return await asyncio.wait_for(waiter, DELIVERY_TIMEOUT)
        except TimeoutError:
            logger.warning("heartbeat: no outcome within %.0fs", DELIVERY_TIMEOUT)
            return Outcome.FAILED
        finally:
            unsubscribe()
            self._waiters.pop(message.id, None)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, TurnFinished) and not event.replied:
            key, outcome = event.turn_id, _UNANSWERED.get(event.outcome, Outcome.FAILED)
        elif isinstance(event, Delivered | DeliveryFailed) and event.in_reply_to:
            key = event.in_reply_to
            outcome = Outcome.DELIVERED if isinstance(event, Delivered) else Outcome.FAILED
        else:
            return
        future = self._waiters.get(key)
        if future is not None and not future.done():
            future.set_result(outcome)


_UNANSWERED = {
    "silent": Outcome.QUIET,
    "answered by message": Outcome.DELIVERED,
    "budget exceeded": Outcome.PAUSED,
    "key refused": Outcome.KEY_REFUSED,
}
"""How a turn that sent no final reply ended; any other such ending (timeout, provider error, crash) failed."""
