"""`relaybot cron run` on the redis bus: the CLI publishes the run itself and waits for the cluster's outcome."""

from __future__ import annotations

from typing import Any

from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState
from bot.scheduler.cron import CronService
from bot.scheduler.outcomes import OutcomeRelay


def scheduler_leader(state: RedisState) -> str | None:
    """Which process leads the scheduler on this Redis (the holder of its lease), or None."""
    holder = state.client.get(state.key("lease", "scheduler"))
    return None if holder is None else as_text(holder)


async def run_in_cluster(cron: CronService, relay: OutcomeRelay, channels: list[str], job_id: str) -> dict[str, Any]:
    """Fire `job_id` once on the shared bus and wait until a worker ran it and a gateway delivered it.

    `cron` publishes on the shared bus and hears outcomes through `relay`; both are started here and stopped after.
    Answers like the control socket's `cron.run`: ok, delivered, error.
    """
    await relay.start()
    await cron.start(paused=True)
    try:
        job = next((job for job in cron.jobs() if job.id == job_id), None)
        if job is None:
            return {"ok": False, "error": "no such job"}
        if job.payload.chat.channel_key not in channels:
            return {"ok": False, "error": f"its target {job.payload.target} is on a channel that is not enabled"}
        record = await cron.run_now(job_id)
        if record is None:
            return {"ok": False, "error": "no such job"}
        return {"ok": record.ok, "delivered": record.delivered, "error": record.error}
    finally:
        await cron.stop()
        await relay.stop()
