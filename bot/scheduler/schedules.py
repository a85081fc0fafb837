"""Schedules a person can write (`at`, `every`, `cron`), turned into apscheduler triggers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from bot.config.durations import parse_duration

ScheduleKind = Literal["at", "every", "cron"]
CRON_SAMPLES = 50  # more than 24 runs a day already has a gap under an hour, so 50 runs show every gap that counts


class ScheduleError(ValueError):
    """A schedule that cannot be used; the message says what to write instead."""


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a job runs: once `at` an ISO time, `every` a duration, or on a 5-field `cron` expression."""

    kind: ScheduleKind
    value: str
    timezone: str

    def describe(self) -> str:
        """A short human description, such as `cron 0 8 * * * (Europe/Berlin)`."""
        return f"{self.kind} {self.value} ({self.timezone})"

    def shortest_interval(self, now: datetime) -> float | None:
        """Seconds between its two closest runs (None for a one-off `at`); cron is sampled over its next runs."""
        if self.kind == "at":
            return None
        trigger = self.trigger(now)
        if self.kind == "every":
            return float(trigger.interval.total_seconds())
        runs = [trigger.get_next_fire_time(None, now)]
        while len(runs) < CRON_SAMPLES and runs[-1] is not None:
            runs.append(trigger.get_next_fire_time(None, runs[-1] + timedelta(seconds=1)))
        times = [run for run in runs if run is not None]
        gaps = [(later - earlier).total_seconds() for earlier, later in zip(times, times[1:], strict=False)]
        return min(gaps, default=None)

    def trigger(self, now: datetime) -> Any:
        """The apscheduler trigger; ScheduleError when the value or timezone is unusable."""
        from apscheduler.triggers.cron import CronTrigger
        from apscheduler.triggers.date import DateTrigger
        from apscheduler.triggers.interval import IntervalTrigger

        zone = zone_named(self.timezone)
        if self.kind == "every":
            if self.value.strip().replace(".", "", 1).isdigit():
                raise ScheduleError(f"{self.value!r} has no unit; write it with s, m, h or d, such as {self.value}m")
            try:
                seconds = parse_duration(self.value)
            except ValueError as exc:
                raise ScheduleError(str(exc)) from None
            if seconds < 1:
                raise ScheduleError("an `every` schedule must be at least 1s")
            return IntervalTrigger(seconds=seconds, timezone=zone)
        if self.kind == "cron":
            if len(self.value.split()) != 5:
                raise ScheduleError(f"{self.value!r} is not a 5-field cron expression (minute hour day month weekday)")
            try:
                return CronTrigger.from_crontab(self.value, timezone=zone)
            except ValueError as exc:
                raise ScheduleError(f"{self.value!r} is not a valid cron expression: {exc}") from None
        moment = parse_moment(self.value, zone)
        if moment <= now:
            raise ScheduleError(
                f"{moment.isoformat()} is in the past; the time is now {now.astimezone(zone):%Y-%m-%d %H:%M}"
            )
        return DateTrigger(run_date=moment, timezone=zone)


def zone_named(name: str) -> ZoneInfo:
    """The IANA timezone `name`; ScheduleError when unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"unknown timezone {name!r}; use an IANA name such as UTC or Europe/Berlin") from None


def parse_moment(value: str, zone: ZoneInfo) -> datetime:
    """An ISO date-time; without an offset it is read in `zone`."""
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ScheduleError(f"{value!r} is not an ISO date-time such as 2026-12-24T18:00") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=zone)
