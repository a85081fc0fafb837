"""apscheduler's asyncio executor with a gate: a due run starts only once this process has claimed it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from apscheduler.executors.asyncio import AsyncIOExecutor


class ClaimingExecutor(AsyncIOExecutor):
    """Claims each due run inside apscheduler's submit, before the store moves the job to its next run.

    A run beyond the job's misfire grace is passed on unclaimed, so apscheduler reports it missed; a run
    another process claimed is dropped here.
    """

    def __init__(self, claim: Callable[[Any, datetime], bool]) -> None:
        super().__init__()
        self._claim = claim

    def _do_submit_job(self, job: Any, run_times: list[datetime]) -> None:
        now = datetime.now(UTC)
        grace = job.misfire_grace_time
        kept = [
            due
            for due in run_times
            if (grace is not None and (now - due).total_seconds() > grace) or self._claim(job, due)
        ]
        super()._do_submit_job(job, kept)
