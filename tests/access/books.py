"""Pairing books for the access tests: the JSON file or one Redis, as separate processes would share them."""

import random
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.access.pairing import Pairing, PairingBook
from bot.access.redis_pairing import RedisPairingBook
from bot.cluster.redis import RedisState


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


Books = Callable[..., Pairing]


def make_books(request: pytest.FixtureRequest, tmp_path: Path) -> Books:
    """A maker of pairing books sharing one store: the JSON file, or one Redis (by the request's param)."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None

    def make(clock: Callable[[], float] | None = None, max_pending: int = 10) -> Pairing:
        choose, clock = random.Random(7).choice, clock or Clock()
        if url is None:
            return PairingBook(tmp_path / "pairing.json", clock=clock, choose=choose, max_pending=max_pending)
        return RedisPairingBook(RedisState(url, "test"), clock=clock, choose=choose, max_pending=max_pending)

    return make
