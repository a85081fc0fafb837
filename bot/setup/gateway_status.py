"""Turning the running gateway's status answer into the lines `relaybot status` prints."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def describe_duration(seconds: float) -> str:
    """A short duration such as `3d 4h`, `2h 5m`, `42s`."""
    seconds = int(max(0, seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def describe_uptime(reply: dict[str, Any] | None, clock: Callable[[], float] = time.time) -> str:
    """`running for 2h 5m`, or how to start it."""
    if reply is None:
        return "not running (start it with `relaybot run`)"
    return f"running for {describe_duration(clock() - float(reply.get('started_at') or clock()))}"


def describe_channel(
    enabled: bool, health: dict[str, Any] | None, gateway_running: bool, clock: Callable[[], float] = time.time
) -> str:
    """One channel's line: disabled, enabled (gateway not running), or its live state with last error."""
    if not enabled:
        return "disabled"
    if not gateway_running or health is None:
        return "enabled" + ("" if gateway_running else " (gateway not running)")
    since = describe_duration(clock() - float(health["since"]))
    if health["state"] == "failed":
        return f"FAILED for {since}, {health['failures']} attempts; last error: {health['last_error']}"
    if health["state"] == "starting":
        return f"starting ({since})"
    return f"connected for {since}"
