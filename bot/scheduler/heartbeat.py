"""The heartbeat: every so often the bot reads HEARTBEAT.md and acts on it, speaking only when it matters."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.agent.loop import AgentLoop
from bot.bus import ChatRef, InboundMessage, MessageBus, OutboundMessage, Trust
from bot.config import HeartbeatConfig
from bot.errors import BudgetExceeded, ProviderError, TurnTimedOut

logger = logging.getLogger(__name__)

HEARTBEAT_OK = "HEARTBEAT_OK"
SESSION_KEY = "heartbeat:main"
MAX_ACK_CHARS = 60
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_INERT_LINE = re.compile(r"^\s*(#.*|[-*+]\s*\[ ?\]\s*|[-*+]\s*\[[xX]\].*|[-*+]\s*|>\s*)?$")
PROMPT = (
    "This is a scheduled heartbeat check. Read the tasks below from HEARTBEAT.md and act on any "
    "that are due now. If nothing needs the owner's attention, reply with exactly HEARTBEAT_OK. "
    "Otherwise reply with what the owner should know.\n\n{tasks}"
)


class Outcome(StrEnum):
    """What one heartbeat run did."""

    OFF_HOURS = "outside active hours"
    NOTHING_TO_DO = "nothing to do"
    NO_TARGET = "skipped: no deliver_to and no owner has written in a direct chat yet"
    BUSY = "target chat busy"
    QUIET = "HEARTBEAT_OK, nothing delivered"
    DELIVERED = "delivered"
    FAILED = "failed"
    PAUSED = "paused: the background budget is used up"


def actionable(text: str) -> bool:
    """Whether HEARTBEAT.md holds anything beyond headings, comments, blank lines and empty or done checkboxes."""
    return any(not _INERT_LINE.match(line) for line in _COMMENT.sub("", text).splitlines())


def strip_ack(reply: str) -> str | None:
    """The reply without a leading or trailing HEARTBEAT_OK; None when nothing of substance is left."""
    text = reply.strip()
    bare = text.strip("*_`.!: \n")
    if bare.startswith(HEARTBEAT_OK):
        rest = bare[len(HEARTBEAT_OK) :]
    elif bare.endswith(HEARTBEAT_OK):
        rest = bare[: -len(HEARTBEAT_OK)]
    else:
        return text
    rest = rest.strip(" \n\t-–—:.,!*_`")
    if len(rest) <= MAX_ACK_CHARS:
        return None
    return rest


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
    """Runs `tick` every `heartbeat.interval`; each run is logged with its outcome."""

    def __init__(
        self,
        config: HeartbeatConfig,
        workspace: Path,
        timezone: str,
        loop: AgentLoop,
        bus: MessageBus,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._file = workspace / "HEARTBEAT.md"
        self._zone = ZoneInfo(timezone)
        self._loop = loop
        self._bus = bus
        self._clock = clock
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.last_run: float | None = None
        self.last_outcome: Outcome | None = None

    async def start(self) -> None:
        if self._config.enabled:
            self._stop.clear()
            self._task = asyncio.create_task(self._every_interval(), name="heartbeat")

    async def stop(self) -> None:
        self._stop.set()
        if self._task:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def tick(self) -> Outcome:
        """One heartbeat: maybe run a turn, deliver anything worth saying."""
        outcome = await self._beat()
        self.last_run, self.last_outcome = self._clock(), outcome
        logger.info("heartbeat: %s", outcome.value)
        return outcome

    async def _every_interval(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), self._config.interval)
                return
            except TimeoutError:
                pass
            try:
                await self.tick()
            except Exception:
                logger.exception("heartbeat run crashed")

    async def _beat(self) -> Outcome:
        if not within_hours(self._config.active_hours, datetime.fromtimestamp(self._clock(), self._zone)):
            return Outcome.OFF_HOURS
        tasks = self._file.read_text(encoding="utf-8") if self._file.exists() else ""
        if not actionable(tasks):
            return Outcome.NOTHING_TO_DO
        target = ChatRef.parse(self._config.deliver_to) if self._config.deliver_to else self._loop.last_owner_chat
        if target is None:
            return Outcome.NO_TARGET
        if self._loop.is_busy(target.session_key):
            return Outcome.BUSY
        message = InboundMessage(
            target, sender_id="heartbeat", text=PROMPT.format(tasks=tasks.strip()), trust=Trust.OWNER, kind="system"
        )
        try:
            result = await self._loop.run_detached(message, SESSION_KEY)
        except BudgetExceeded:
            return Outcome.PAUSED  # the budget guard has logged it and told the owner once
        except (ProviderError, TurnTimedOut) as exc:
            logger.warning("heartbeat: the turn failed (%s)", type(exc).__name__)
            return Outcome.FAILED
        text = strip_ack(result.text)
        if text is None:
            return Outcome.QUIET
        await self._bus.publish_outbound(OutboundMessage(target, text, kind="notice"))
        return Outcome.DELIVERED
