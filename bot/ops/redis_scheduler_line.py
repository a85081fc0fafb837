"""The scheduler line on the redis bus: the leader is found through Redis, and a job fired here reports back there."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.cluster.redis import RedisState
from bot.ops.scheduler_line import Reply

if TYPE_CHECKING:
    from bot.bus import MessageBus
    from bot.bus.redis.bus import RedisBus
    from bot.events import EventBus
    from bot.scheduler.cron import CronService

MakeCron = Callable[["MessageBus", "EventBus", "EventBus"], "CronService"]


class ClusterLine:
    """Whether a scheduler leader runs, and a job fired from this process with its outcome relayed through Redis."""

    def __init__(self, state: RedisState, bus: Callable[[], RedisBus], cron: MakeCron) -> None:
        """`bus` and `cron` make this process's bus and cron service over the same Redis."""
        self._state = state
        self._bus = bus
        self._cron = cron

    def jobs_changed(self) -> bool:
        """The redis job store tells its leader itself; this says whether there is one."""
        from bot.scheduler.cluster_run import scheduler_leader

        try:
            return scheduler_leader(self._state) is not None
        finally:
            self._state.client.close()

    def run_now(self, job_id: str, channels: list[str], timeout: float) -> Reply | None:
        return asyncio.run(self._run(job_id, channels, timeout))

    async def _run(self, job_id: str, channels: list[str], timeout: float) -> Reply | None:
        from bot.events import EventBus
        from bot.scheduler.cluster_run import run_in_cluster, scheduler_leader
        from bot.scheduler.outcomes import OutcomeRelay

        try:
            if scheduler_leader(self._state) is None:
                return None
            events, outcomes = EventBus(), EventBus()
            relay = OutcomeRelay(self._state, events, outcomes)
            bus = self._bus()
            try:
                cron = self._cron(bus, events, outcomes)
                return await asyncio.wait_for(run_in_cluster(cron, relay, channels, job_id), timeout)
            finally:
                await bus.stop()
        except TimeoutError:
            return {"ok": False, "error": f"no outcome within {timeout:.0f}s"}
        finally:
            await self._state.aclose()
