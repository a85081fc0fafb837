"""Cron jobs: persisted in SQLite through apscheduler, delivered as reminders or agent turns."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.bus import ChatRef, InboundMessage, MessageBus, OutboundMessage, Trust
from bot.cancelling import cancel_and_wait
from bot.events import CronRan, CronSkipped, Delivered, DeliveryFailed, EventBus
from bot.scheduler.deliveries import DeliveryWaiters
from bot.scheduler.limits import Action, check_job
from bot.scheduler.run_log import RunHistory, RunLog, RunRecord
from bot.scheduler.schedules import Schedule, ScheduleError, zone_named

if TYPE_CHECKING:
    from bot.cluster.redis import RedisState
    from bot.scheduler.redis_cron import JobChanges, RunClaims

logger = logging.getLogger(__name__)

DELIVERY_TIMEOUT = 900.0
LATE_AFTER = 60.0


@dataclass(frozen=True, slots=True)
class JobPayload:
    """What a job does and for whom; stored with the job so it survives restarts."""

    target: str
    action: Action
    text: str
    schedule: str
    trust: str = Trust.OWNER.value
    is_direct: bool = True
    creator: str = ""  # channel:user_id of who asked for it, so a guest's jobs can be counted

    @property
    def chat(self) -> ChatRef:
        return ChatRef.parse(self.target)


@dataclass(frozen=True, slots=True)
class JobInfo:
    """A job as the CLI and the cron tool show it."""

    id: str
    name: str
    payload: JobPayload
    next_run: datetime | None
    last_run: RunRecord | None


_active: CronService | None = None


async def run_job(job_id: str, payload: dict[str, Any]) -> None:
    """The callable apscheduler persists by import path; it hands the run to the live service."""
    if _active is None:
        logger.error("cron job %s fired with no running cron service", job_id)
        return
    await _active.fire(job_id, JobPayload(**payload), _active.due_time(job_id))


class CronService:
    """Adds, lists, removes and fires jobs; one store (SQLite, or Redis on the redis bus) serves every process."""

    def __init__(
        self,
        state_dir: Path,
        timezone: str,
        misfire_grace: float,
        bus: MessageBus | None = None,
        events: EventBus | None = None,
        clock: Callable[[], float] = time.time,
        shared: RedisState | None = None,
        outcomes: EventBus | None = None,
    ) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self._state_dir = state_dir
        self._misfire_grace = max(1, int(misfire_grace))
        self._timezone = timezone
        self._bus = bus
        self._events = events or EventBus()
        self._outcomes = outcomes or self._events
        self._clock = clock
        self._shared = shared
        self._runs: RunHistory = RunLog(state_dir / "cron_runs.jsonl")
        self._claims: RunClaims | None = None
        self._changes: JobChanges | None = None
        if shared is not None:
            from bot.scheduler.redis_cron import JobChanges, RedisRunLog, RunClaims

            self._runs, self._claims, self._changes = RedisRunLog(shared), RunClaims(shared), JobChanges(shared)
        self._deliveries = DeliveryWaiters()
        self._due: dict[str, datetime] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._unsubscribe: Callable[[], None] = lambda: None

    @functools.cached_property
    def _scheduler(self) -> Any:
        """apscheduler over its store, made on first use: importing it costs a few hundred ms."""
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        from bot.scheduler.claiming import ClaimingExecutor

        if self._shared is not None:
            from bot.scheduler.redis_cron import redis_job_store

            store = redis_job_store(self._shared)
        else:
            from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

            store = SQLAlchemyJobStore(url=f"sqlite:///{self._state_dir / 'scheduler.db'}")
        return AsyncIOScheduler(
            jobstores={"default": store},
            executors={"default": ClaimingExecutor(self._claim)},
            timezone=zone_named(self._timezone),
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": self._misfire_grace},
        )

    def _open(self) -> Any:
        """The scheduler with its store open, paused until `lead`: a turn may add a job before this process leads."""
        if not self._scheduler.running:
            self._scheduler.start(paused=True)
            self._unsubscribe = self._outcomes.subscribe(self._deliveries.on_event, Delivered, DeliveryFailed)
        return self._scheduler

    async def start(self, paused: bool = False) -> None:
        """Start firing jobs (or, paused, only edit the store, as the CLI and a process that does not lead do)."""
        self._open()
        if not paused:
            await self.lead()

    async def lead(self) -> None:
        """Fire jobs from now on: publish runs a previous leader claimed but did not publish, follow changes."""
        global _active
        from apscheduler.events import EVENT_JOB_MISSED

        self._scheduler.add_listener(self._on_missed, EVENT_JOB_MISSED)
        _active = self
        if self._changes is not None:
            self._spawn(self._changes.follow(self.wakeup))
        self._catch_up()
        self._scheduler.resume()

    async def stop(self) -> None:
        global _active
        self._unsubscribe()
        self._unsubscribe = lambda: None
        await cancel_and_wait(*self._tasks)  # the change follower loops on redis-py, which may swallow a cancel
        if self._scheduler.running:
            self._scheduler.shutdown(wait=False)
        if _active is self:
            _active = None

    def add(
        self,
        schedule: Schedule,
        target: ChatRef,
        action: Action,
        text: str,
        name: str | None = None,
        trust: Trust = Trust.OWNER,
        is_direct: bool = True,
        next_run: datetime | None = None,
        creator: str = "",
    ) -> JobInfo:
        """Persist a new job; ScheduleError when its schedule cannot be used or breaks a limit of `trust`."""
        if not text.strip():
            raise ScheduleError(f"a {action} job needs text")
        now = datetime.now(zone_named(schedule.timezone))
        trigger = schedule.trigger(now)
        check_job(schedule, action, trust, self._held_by(creator) if creator else 0, now)
        payload = JobPayload(target.session_key, action, text, schedule.describe(), trust.value, is_direct, creator)
        job_id = uuid.uuid4().hex[:8]
        options: dict[str, Any] = {"next_run_time": next_run} if next_run else {}
        job = self._open().add_job(
            "bot.scheduler.cron:run_job",
            trigger=trigger,
            id=job_id,
            name=name or text[:40],
            kwargs={"job_id": job_id, "payload": asdict(payload)},
            **options,
        )
        logger.info("cron job %s added for %s: %s", job_id, payload.target, payload.schedule)
        self._announce()
        return self._info(job, {})

    def jobs(self, target: ChatRef | None = None) -> list[JobInfo]:
        """Every job (or only those aimed at `target`), soonest first."""
        latest = self._runs.latest()
        infos = [self._info(job, latest) for job in self._open().get_jobs()]
        if target is not None:
            infos = [info for info in infos if info.payload.target == target.session_key]
        far = datetime.max.replace(tzinfo=zone_named("UTC"))
        return sorted(infos, key=lambda info: info.next_run or far)

    def _held_by(self, creator: str) -> int:
        return sum(1 for job in self._open().get_jobs() if job.kwargs["payload"].get("creator") == creator)

    def remove(self, job_id: str, target: ChatRef | None = None) -> bool:
        """Delete a job (only if it targets `target`, when given); False when there is no such job."""
        from apscheduler.jobstores.base import JobLookupError

        job = self._open().get_job(job_id)
        if job is None or (target is not None and job.kwargs["payload"]["target"] != target.session_key):
            return False
        try:
            self._open().remove_job(job_id)
        except JobLookupError:
            return False
        logger.info("cron job %s removed", job_id)
        self._announce()
        return True

    async def run_now(self, job_id: str) -> RunRecord | None:
        """Fire a job at once, outside its schedule; None when there is no such job."""
        job = self._open().get_job(job_id)
        if job is None:
            return None
        return await self.fire(job_id, JobPayload(**job.kwargs["payload"]))

    def wakeup(self) -> None:
        """Re-read the store now (another process changed it)."""
        self._scheduler.wakeup()

    def _announce(self) -> None:
        """Tell the leader, on any machine, to re-read the store (the local bus uses the control socket)."""
        if self._changes is not None:
            self._changes.announce()

    def _claim(self, job: Any, due: datetime) -> bool:
        """Take a due run before apscheduler moves the job on; False when another process took it."""
        if self._claims is not None and not self._claims.claim(job.id, due, job.kwargs["payload"]):
            logger.info("cron job %s: its run due %s was claimed by another process", job.id, due.isoformat())
            return False
        self._due[job.id] = due
        return True

    def _catch_up(self) -> None:
        """Publish the runs a leader claimed and died before publishing; those beyond misfire_grace are skipped."""
        if self._claims is None:
            return
        for job_id, due, payload in self._claims.pending():
            late = self._clock() - due.timestamp()
            if late > self._misfire_grace:
                self._claims.release(job_id, due)
                logger.warning("cron job %s: a claimed run missed its time by %.0fs; skipped", job_id, late)
                self._events.emit(CronSkipped(job_id, late))
                continue
            logger.warning("cron job %s: publishing its run due %s for a leader that stopped", job_id, due.isoformat())
            self._spawn(self.fire(job_id, JobPayload(**payload), due))

    def _spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("a cron task failed", exc_info=task.exception())

    def due_time(self, job_id: str) -> datetime | None:
        """When the run apscheduler is starting now was due (it is told before the job runs)."""
        return self._due.pop(job_id, None)

    async def fire(self, job_id: str, payload: JobPayload, due: datetime | None = None) -> RunRecord:
        """Run one job: deliver a reminder as-is (noting when it is late), or run an agent turn in the target chat.

        A scheduled run gets ids made of the job and its due time, so the journal takes it once even if
        apscheduler fires the same run again after a crash.
        """
        assert self._bus is not None, "firing jobs needs the bus"
        ran_at = self._clock()
        chat = payload.chat
        run_id = f"cron-{job_id}-{int(due.timestamp())}" if due else f"cron-{job_id}-now-{uuid.uuid4().hex[:8]}"
        if payload.action == "remind":
            text = payload.text
            if due is not None and ran_at - due.timestamp() > LATE_AFTER:
                local = due.astimezone(zone_named(self._timezone))
                text += f"\n\n(Late: this reminder was due at {local:%H:%M} on {local:%b %d}, while I was offline.)"
                logger.warning("[%s] cron job %s runs late (due %s)", payload.target, job_id, local.isoformat())
            message = OutboundMessage(chat, text, kind="notice", id=run_id)
            key = message.id
            waiter = self._deliveries.expect(key)
            accepted = await self._bus.publish_outbound(message)
        else:
            inbound = InboundMessage(
                chat,
                sender_id="cron",
                text=f"[scheduled job {job_id}] {payload.text}",
                trust=Trust(payload.trust),
                is_direct=payload.is_direct,
                kind="system",
                origin="cron",
                charge_to=payload.creator or None,
                id=run_id,
            )
            key = inbound.id
            waiter = self._deliveries.expect(key)
            accepted = await self._bus.publish_inbound(inbound)
        if due is not None and self._claims is not None:
            self._claims.release(job_id, due)
        if not accepted:
            self._deliveries.forget(key)
            logger.info("[%s] cron job %s: this run was already journaled; not run again", payload.target, job_id)
            return RunRecord(job_id, ran_at, ok=True, delivered=False)
        try:
            delivered, error = await asyncio.wait_for(waiter, DELIVERY_TIMEOUT)
        except TimeoutError:
            delivered, error = False, f"no delivery within {DELIVERY_TIMEOUT:.0f}s"
        finally:
            self._deliveries.forget(key)
        record = RunRecord(job_id, ran_at, ok=error is None, delivered=delivered, error=error)
        self._runs.append(record)
        self._events.emit(CronRan(job_id, payload.chat, record.ok, delivered, error))
        outcome = "delivered" if delivered else f"failed: {error}"
        logger.info("[%s] cron job %s ran (%s)", payload.target, job_id, outcome)
        return record

    def _on_missed(self, event: Any) -> None:
        late = datetime.now(event.scheduled_run_time.tzinfo) - event.scheduled_run_time
        logger.warning(
            "cron job %s skipped: missed its run by %s, beyond scheduler.misfire_grace", event.job_id, _round(late)
        )
        self._events.emit(CronSkipped(event.job_id, late.total_seconds()))

    def _info(self, job: Any, latest: dict[str, RunRecord]) -> JobInfo:
        return JobInfo(job.id, job.name, JobPayload(**job.kwargs["payload"]), job.next_run_time, latest.get(job.id))


def _round(delta: timedelta) -> timedelta:
    return timedelta(seconds=int(delta.total_seconds()))
