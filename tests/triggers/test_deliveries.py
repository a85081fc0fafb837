"""The delivery book: the first record of a delivery id wins and outlives the process."""

from __future__ import annotations

from pathlib import Path

from bot.config.schema import Config
from bot.ops.retention import prune_state
from bot.triggers.deliveries import DeliveryBook, deliveries_path, prune_deliveries


def test_a_delivery_is_known_after_a_reopen_with_its_first_run(tmp_path: Path) -> None:
    now = [1.0]
    book = DeliveryBook(tmp_path / "triggers.db", clock=lambda: now[0])
    first = book.take("github", "d-1", "run-1", "pull_request", "accepted")
    now[0] = 2.0
    again = book.take("github", "d-1", "run-2", "pull_request", "accepted")
    assert again == first and first.accepted_at == 1000
    book.finish("run-1", "answered")
    book.close()
    reopened = DeliveryBook(tmp_path / "triggers.db")
    known = reopened.known("github", "d-1")
    assert known is not None and known.run_id == "run-1" and known.outcome == "answered"
    assert reopened.known("other", "d-1") is None


def test_last_is_the_latest_delivery_of_that_trigger(tmp_path: Path) -> None:
    now = [1.0]
    book = DeliveryBook(tmp_path / "triggers.db", clock=lambda: now[0])
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
