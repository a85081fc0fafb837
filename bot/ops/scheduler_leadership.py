"""Cron, the heartbeat and the control socket run in one process: here, or where the scheduler lease is held."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.cancelling import cancel_and_wait
from bot.cluster.roles import ClusterLeases
from bot.ops.control import ControlServer
from bot.scheduler.cron import CronService
from bot.scheduler.heartbeat import HeartbeatService

logger = logging.getLogger(__name__)


class Heartbeats(Protocol):
    """More heartbeats to run while this process schedules (the further agents')."""

    async def start(self) -> None: ...
    async def stop(self) -> None: ...


class SchedulerLeadership:
    """Starts the scheduler at once on one process, or only while holding the cluster's scheduler lease."""

    def __init__(
        self,
        cron: CronService,
        heartbeat: HeartbeatService,
        control: ControlServer,
        leases: ClusterLeases | None,
        job_store_module: str,
        lost: asyncio.Event,
        others: Heartbeats | None = None,
    ) -> None:
        self._cron = cron
        self._heartbeat = heartbeat
        self._control = control
        self._leases = leases
        self._job_store_module = job_store_module
        self._lost = lost
        self._others = others  # the further agents' heartbeats, which run beside the default one's
        self._leading: asyncio.Task[None] | None = None
        self._scheduling = False

    async def start(self, warmed: Callable[[], Awaitable[None]]) -> None:
        """Start scheduling after `warmed`; in a cluster, open the job store now and lead once the lease is ours."""
        if self._leases is None:
            await self._start_scheduler(warmed)
            return
        await self._open_job_store()
        self._leading = asyncio.create_task(self._lead(self._leases, warmed), name="scheduler-leader")

    async def stop(self) -> None:
        """Close the control socket, stop waiting for the lease, stop the heartbeat and cron."""
        if self._scheduling:
            await self._control.stop()
        await cancel_and_wait(self._leading)  # on Python 3.11 a Redis call can swallow a plain cancel
        await self._stop_heartbeats()
        await self._cron.stop()

    async def _start_scheduler(self, warmed: Callable[[], Awaitable[None]]) -> None:
        """Cron, the heartbeat and the control socket the CLI's cron commands reach: in one process only."""
        # After the model's warm-up (a first message may be waiting for it), and in a thread, so the event loop
        # keeps serving the channels while the scheduler's imports load.
        await warmed()
        await asyncio.to_thread(importlib.import_module, self._job_store_module)
        await self._cron.start()
        await self._heartbeat.start()
        if self._others is not None:
            await self._others.start()
        await self._control.start()
        self._scheduling = True

    async def _open_job_store(self) -> None:
        """Open the shared job store without firing: the cron tool adds and removes jobs on any worker."""
        await asyncio.to_thread(importlib.import_module, "apscheduler.schedulers.asyncio")
        await self._cron.start(paused=True)

    async def _lead(self, leases: ClusterLeases, warmed: Callable[[], Awaitable[None]]) -> None:
        """Run cron and the heartbeat only while this process holds the scheduler lease."""
        await leases.hold_scheduler(self._lost_scheduler)
        await self._start_scheduler(warmed)

    async def _lost_scheduler(self) -> None:
        """Another process leads the scheduler now: stop cron and the heartbeat at once, then stop the process."""
        logger.error("the scheduler lease was lost; this process stops scheduling")
        await self._stop_heartbeats()
        await self._cron.stop()
        self._lost.set()

    async def _stop_heartbeats(self) -> None:
        await self._heartbeat.stop()
        if self._others is not None:
            await self._others.stop()
