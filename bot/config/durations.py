"""Durations as config writes them: `30s`, `10m`, `1h`, `2d`, `250ms` or a number of seconds."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(value: Any) -> float:
    """Turn `30s`, `10m`, `1h`, `2d`, `250ms` or a number of seconds into seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 10m or 1h")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; use a number with s, m or h, such as 30s, 10m or 1h")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]


Duration = Annotated[float, BeforeValidator(parse_duration)]
