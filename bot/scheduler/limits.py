"""How often scheduled jobs may run and how many a guest may hold: the brake on model cost through cron."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.bus import Trust
from bot.scheduler.schedules import Schedule, ScheduleError

Action = Literal["message", "remind"]


@dataclass(frozen=True, slots=True)
class JobLimits:
    """The shortest interval per action (a prompt costs a model call, a reminder does not) and a cap on jobs."""

    who: str
    prompt_every: float
    remind_every: float
    max_jobs: int | None


ROLE_LIMITS = {
    Trust.GUEST: JobLimits("guests", prompt_every=3600.0, remind_every=60.0, max_jobs=5),
    Trust.USER: JobLimits("users", prompt_every=3600.0, remind_every=60.0, max_jobs=20),
    Trust.ADMIN: JobLimits("admins", prompt_every=300.0, remind_every=0.0, max_jobs=100),
    Trust.OWNER: JobLimits("owners", prompt_every=60.0, remind_every=0.0, max_jobs=None),
}
"""Each role's brake: the more trusted, the more often and the more jobs."""


def limits_for(trust: Trust) -> JobLimits:
    """The limits of the creator's role."""
    return ROLE_LIMITS[trust]


def check_job(schedule: Schedule, action: Action, trust: Trust, held: int, now: datetime) -> None:
    """Raise ScheduleError naming the limit when the job would run too often or its creator holds too many."""
    limits = limits_for(trust)
    if limits.max_jobs is not None and held >= limits.max_jobs:
        raise ScheduleError(
            f"{limits.who} may hold at most {limits.max_jobs} scheduled jobs and you already have {held}; "
            "remove one first (action=list shows them, action=remove takes its id)"
        )
    floor = limits.prompt_every if action == "message" else limits.remind_every
    interval = schedule.shortest_interval(now)
    if interval is not None and interval < floor:
        kind = "prompt (message)" if action == "message" else "reminder"
        hint = "; for a plain text, use remind instead" if action == "message" else ""
        raise ScheduleError(
            f"{limits.who} may schedule a {kind} at most every {_span(floor)}, and this one would run "
            f"every {_span(interval)}; choose a longer interval{hint}"
        )


def _span(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"
