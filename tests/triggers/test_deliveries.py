"""The delivery books: the first record of a delivery id wins and outlives the process, in SQLite and in Redis alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.config.schema import Config
from bot.ops.retention import prune_state
from bot.triggers.deliveries import Deliveries, DeliveryBook, deliveries_path, prune_deliveries
from bot.triggers.redis_deliveries import RedisDeliveryBook

Clock = Callable[[], float]
Opener = Callable[[Clock], Deliveries]


@pytest.fixture(params=["sqlite", "redis"])
def open_book(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the book afresh on the same store each time (as a restarted gateway does)."""
    if request.param == "sqlite":
        return lambda clock: DeliveryBook(tmp_path / "triggers.db", clock=clock)
    url = request.getfixturevalue("redis_url")
    return lambda clock: RedisDeliveryBook(RedisState(url), keep=None, clock=clock)


def test_a_delivery_is_known_after_a_reopen_with_its_first_run(open_book: Opener) -> None:
    now = [1.0]
    book = open_book(lambda: now[0])
    first = book.take("github", "d-1", "run-1", "pull_request", "accepted")
    now[0] = 2.0
    again = book.take("github", "d-1", "run-2", "pull_request", "accepted")
    assert again == first and first.accepted_at == 1000
    book.finish("run-1", "answered")
    book.close()
    reopened = open_book(lambda: now[0])
    known = reopened.known("github", "d-1")
    assert known is not None and known.run_id == "run-1" and known.outcome == "answered"
    assert reopened.known("other", "d-1") is None


def test_last_is_the_latest_delivery_of_that_trigger(open_book: Opener) -> None:
    now = [1.0]
    book = open_book(lambda: now[0])
    assert book.last("github") is None
    book.take("github", "d-1", "run-1", "pull_request", "accepted")
    now[0] = 2.0
    book.take("github", "d-2", None, "ping", "ping")
    book.take("other", "d-3", "run-3", "", "accepted")
    last = book.last("github")
    assert last is not None and last.delivery == "d-2" and last.outcome == "ping"


def test_retention_forgets_deliveries_older_than_run_logs(tmp_path: Path) -> None:
    day = 86400.0
    now = [100 * day]
    book = DeliveryBook(deliveries_path(tmp_path / "state"), clock=lambda: now[0])
    book.take("github", "old", "run-1", "pull_request", "answered")
    now[0] = 140 * day
    book.take("github", "new", "run-2", "pull_request", "answered")
    book.close()
    config = Config.model_validate(
        {"workspace": tmp_path / "ws", "state_dir": tmp_path / "state", "retention": {"run_logs": "30d"}}
    )
    assert prune_state(config, 145 * day).run_logs == 1
    kept = DeliveryBook(deliveries_path(tmp_path / "state"))
    assert kept.known("github", "old") is None and kept.known("github", "new") is not None
    assert prune_deliveries(tmp_path / "nowhere.db", now[0]) == 0


def test_redis_keeps_a_delivery_for_run_logs_seconds(redis_url: str) -> None:
    state = RedisState(redis_url)
    RedisDeliveryBook(state, keep=3600.0).take("github", "d-1", "run-1", "pull_request", "accepted")
    ttl = state.client.ttl(state.key("triggers", "delivery", "github", "d-1"))
    assert 3500 < int(ttl) <= 3600
