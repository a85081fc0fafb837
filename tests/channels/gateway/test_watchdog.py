"""The watchdog: a connected channel with no successful poll for three long-poll timeouts is restarted, once."""

from __future__ import annotations

import logging

import pytest

from channels.gateway.watchdog import Watchdog, is_fresh, is_wedged
from channels.liveness import Liveness


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_liveness_is_fresh_then_stale_then_wedged() -> None:
    clock = Clock()
    liveness = Liveness(10.0, clock)
    clock.now += 19
    assert is_fresh(liveness) and not is_wedged(liveness)
    clock.now += 2
    assert not is_fresh(liveness) and not is_wedged(liveness)
    clock.now += 10
    assert is_wedged(liveness)
    liveness.beat()
    assert is_fresh(liveness)


async def test_wedged_channel_is_restarted_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    channels = {"telegram": Liveness(10.0, clock), "slack": Liveness(10.0, clock)}
    restarted: list[str] = []

    async def restart(name: str) -> None:
        restarted.append(name)
        channels[name] = Liveness(10.0, clock)  # a restarted channel starts a fresh count

    watchdog = Watchdog(lambda: channels, restart)
    clock.now += 25
    channels["slack"].beat()
    assert await watchdog.check() == []
    clock.now += 6
    with caplog.at_level(logging.WARNING, "channels.gateway.watchdog"):
        assert await watchdog.check() == ["telegram"]
        assert await watchdog.check() == []
    assert restarted == ["telegram"]
    assert [r.getMessage() for r in caplog.records] == [
        "telegram: no successful poll for 31s (wedged); restarting the channel"
    ]
