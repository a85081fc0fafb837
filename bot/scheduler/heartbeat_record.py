"""Where the heartbeat's last run is kept: in the process, or in Redis so any process's dashboard shows it."""

from __future__ import annotations

from bot.cluster.redis import RedisState


class HeartbeatRecord:
    """When the heartbeat last ran and what came of it, in this process."""

    def __init__(self) -> None:
        self._last: tuple[float, str] | None = None

    def save(self, at: float, outcome: str) -> None:
        """Remember one run."""
        self._last = (at, outcome)

    def last(self) -> tuple[float, str] | None:
        """The last run's time and outcome, or None before the first."""
        return self._last


class RedisHeartbeatRecord(HeartbeatRecord):
    """The last run in a Redis hash: written by whichever process leads the scheduler, read by any."""

    def __init__(self, shared: RedisState) -> None:
        super().__init__()
        self._shared = shared
        self._key = shared.key("heartbeat")

    def save(self, at: float, outcome: str) -> None:
        self._shared.client.hset(self._key, mapping={"last_run": at, "last_outcome": outcome})

    def last(self) -> tuple[float, str] | None:
        found = self._shared.client.hmget(self._key, ["last_run", "last_outcome"])
        if found[0] is None:
            return None
        return float(found[0]), str(found[1])
