"""The dashboard's snapshot reads the session files in a worker thread, never on the event loop."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from bot.config.schema import HeartbeatConfig
from bot.ops.dashboard import Dashboard
from bot.usage.ledger import UsageLedger


class Nothing:
    """Channels, cron, pairing and heartbeat with nothing to show."""

    last_run = None
    last_outcome = None

    def health(self) -> dict[str, Any]:
        return {}

    def counts(self) -> dict[str, Any]:
        return {}

    def jobs(self) -> list[Any]:
        return []

    def pending(self) -> list[Any]:
        return []

    def approved(self) -> dict[str, Any]:
        return {}


async def test_session_summaries_are_read_off_the_event_loop(tmp_path: Path) -> None:
    readers: list[threading.Thread] = []

    def summaries(since: float) -> list[dict[str, Any]]:
        readers.append(threading.current_thread())
        return [{"key": "telegram:1", "last_activity": 5.0, "messages": 3}]

    nothing = Nothing()
    ledger = UsageLedger(tmp_path / "usage.db")
    dashboard = Dashboard(nothing, summaries, ledger, "UTC", nothing, nothing, HeartbeatConfig(), nothing)  # type: ignore[arg-type]
    state = await dashboard.snapshot()
    assert readers and readers[0] is not threading.main_thread()
    assert state["sessions"] == [{"key": "telegram:1", "last_activity": 5.0, "messages": 3, "tokens": 0, "model": None}]
