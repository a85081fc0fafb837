"""Budget periods in the configured timezone: today starts at midnight, the month on the 1st."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo


def day_start(now: float, zone: ZoneInfo) -> datetime:
    """Midnight of the local day holding `now`."""
    return datetime.fromtimestamp(now, zone).replace(hour=0, minute=0, second=0, microsecond=0)


def month_start(now: float, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of the local month holding `now`."""
    return day_start(now, zone).replace(day=1)


def next_day(now: float, zone: ZoneInfo) -> datetime:
    """The next local midnight."""
    start = day_start(now, zone)
    return (start + timedelta(days=1, hours=3)).replace(hour=0)  # hours=3 steps over a DST change safely


def next_month(now: float, zone: ZoneInfo) -> datetime:
    """Midnight of the 1st of the next local month."""
    start = month_start(now, zone)
    return (start + timedelta(days=32)).replace(day=1)
