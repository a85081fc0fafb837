"""The rate limit: a sliding window on an injected clock."""

from __future__ import annotations

from bot.triggers.rate import RateLimit


def test_the_window_refuses_then_frees_up_with_the_wait_to_retry() -> None:
    now = [1000.0]
    limit = RateLimit(2, 60.0, clock=lambda: now[0])
    assert limit.take() is None
    now[0] += 10
    assert limit.take() is None
    assert limit.take() == 50
    now[0] += 49.5
    assert limit.take() == 1
    now[0] += 0.5
    assert limit.take() is None
    assert limit.take() == 10
