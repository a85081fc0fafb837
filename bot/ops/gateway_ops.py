"""The gateway's own ops on the control socket: `status`, `cron.run` and `cron.changed`."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from bot.ops.control import Handler
from bot.ops.dashboard import ChannelState
from bot.scheduler.cron import CronService


class ChannelStates(Protocol):
    """What `status` reads from the channel manager: each channel's connection state."""

    def health(self) -> Mapping[str, ChannelState]: ...


def gateway_handlers(
    cron: CronService,
    channels: ChannelStates,
    names: Collection[str],
    cramped: Callable[[], str | None],
) -> dict[str, Handler]:
    """`status` (channels, start time, a context warning), `cron.run` (a job now, if its channel runs here) and
    `cron.changed` (the CLI edited the jobs: look again)."""
    since = time.time()  # the gateway's start, as `relaybot status` shows it

    async def status(request: dict[str, Any]) -> dict[str, Any]:
        states = {name: health.as_dict() for name, health in channels.health().items()}
        return {"ok": True, "started_at": since, "channels": states, "context": cramped()}

    async def run(request: dict[str, Any]) -> dict[str, Any]:
        job = next((job for job in cron.jobs() if job.id == str(request.get("id"))), None)
        if job is None:
            return {"ok": False, "error": "no such job"}
        if job.payload.chat.channel_key not in names:
            return {"ok": False, "error": f"its target {job.payload.target} is on a channel that is not enabled"}
        record = await cron.run_now(job.id)
        if record is None:
            return {"ok": False, "error": "no such job"}
        return {"ok": record.ok, "delivered": record.delivered, "error": record.error}

    async def changed(request: dict[str, Any]) -> dict[str, Any]:
        cron.wakeup()
        return {"ok": True}

    return {"status": status, "cron.run": run, "cron.changed": changed}
