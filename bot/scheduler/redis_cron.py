"""Cron state on the redis bus: the job store, the run log, claims on due runs, and change notices to the leader."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

from bot.bus.redis.connection import as_text
from bot.cluster.redis import RedisState
from bot.scheduler.run_log import RunRecord

logger = logging.getLogger(__name__)

RETRY = 1.0


def redis_job_store(state: RedisState) -> Any:
    """apscheduler's RedisJobStore on the bot's Redis, its keys under `bus.prefix` (it pickles, so no str replies)."""
    from apscheduler.jobstores.redis import RedisJobStore
    from redis.connection import parse_url

    return RedisJobStore(
        jobs_key=state.key("cron", "jobs"),
        run_times_key=state.key("cron", "run_times"),
        socket_timeout=state.timeout,
        socket_connect_timeout=state.timeout,
        **parse_url(state.url),
    )


class RedisRunLog:
    """The latest run of each job, in one Redis hash (job id -> record), shared by every process."""

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._key = state.key("cron", "last_run")

    def append(self, record: RunRecord) -> None:
        self._state.client.hset(self._key, record.job_id, json.dumps(asdict(record)))

    def latest(self) -> dict[str, RunRecord]:
        """The most recent run of each job."""
        latest: dict[str, RunRecord] = {}
        for job_id, text in self._state.client.hgetall(self._key).items():
            try:
                latest[as_text(job_id)] = RunRecord(**json.loads(text))
            except (ValueError, TypeError):
                continue
        return latest


class RunClaims:
    """Due runs a leader has claimed but not yet published: claimed once (HSETNX), dropped once published.

    A claim holds the job's payload, so a new leader can publish a run its predecessor claimed and died
    before publishing, even when the job itself (a one-shot) is already gone from the store.
    """

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._key = state.key("cron", "claims")

    @staticmethod
    def _field(job_id: str, due: datetime) -> str:
        return f"{job_id}@{due.timestamp():.0f}"

    def claim(self, job_id: str, due: datetime, payload: dict[str, Any]) -> bool:
        """True when this run was not claimed before (by this process or any other)."""
        body = json.dumps({"job_id": job_id, "due": due.timestamp(), "payload": payload})
        return bool(self._state.client.hsetnx(self._key, self._field(job_id, due), body))

    def release(self, job_id: str, due: datetime) -> None:
        """The run is published (the bus journal takes it once from here on)."""
        self._state.client.hdel(self._key, self._field(job_id, due))

    def pending(self) -> list[tuple[str, datetime, dict[str, Any]]]:
        """Every claimed run not yet published: job id, due time, payload."""
        runs = []
        for text in self._state.client.hvals(self._key):
            data = json.loads(text)
            runs.append((data["job_id"], datetime.fromtimestamp(data["due"], UTC), data["payload"]))
        return sorted(runs, key=lambda run: run[1])


class JobChanges:
    """A Redis channel on which any process says "the jobs changed", so the leader re-reads the store at once."""

    def __init__(self, state: RedisState) -> None:
        self._state = state
        self._channel = state.key("cron", "changed")

    def announce(self) -> None:
        self._state.client.publish(self._channel, "changed")

    async def follow(self, on_change: Callable[[], None]) -> None:
        """Call `on_change` for every notice until cancelled, and after a lost connection (a notice may be lost)."""
        from redis.exceptions import ConnectionError as Unreachable
        from redis.exceptions import TimeoutError as Unanswered

        while True:
            pubsub = self._state.aclient.pubsub()
            try:
                await pubsub.subscribe(self._channel)
                async for message in pubsub.listen():  # redis-py waits here past the client's socket timeout
                    if message["type"] == "message":
                        on_change()
            except (Unreachable, Unanswered):
                logger.warning("cron change notices are unreachable; retrying in %.0fs", RETRY)
                await asyncio.sleep(RETRY)
                on_change()
            finally:
                await asyncio.shield(pubsub.aclose())
