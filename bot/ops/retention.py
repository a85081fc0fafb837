"""Keeping state bounded: once a day, archived sessions, ledger rows, journal rows and run logs past `retention`."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.config.paths import files_path, journal_path, sessions_dir
from bot.config.schema import Config

logger = logging.getLogger(__name__)

DAY = 86400.0


@dataclass(frozen=True, slots=True)
class Pruned:
    """How many items of each kind one pass removed."""

    sessions: int = 0
    ledger: int = 0
    journal: int = 0
    run_logs: int = 0
    files: int = 0


def ledger_cutoff(now: float, keep: float, timezone: str) -> float:
    """Rows before this may go: older than `keep`, and never this month's, which monthly budgets still sum."""
    local = datetime.fromtimestamp(now, ZoneInfo(timezone))
    month_start = local.replace(day=1, hour=0, minute=0, second=0, microsecond=0).timestamp()
    return min(now - keep, month_start)


def prune_state(config: Config, now: float) -> Pruned:
    """One pass over this home's files: what `retention` says is old goes (null keeps a kind forever)."""
    from bot.bus.journal import prune_journal
    from bot.sessions.store import prune_archived
    from bot.usage.ledger import prune_ledger

    keep = config.retention
    state = config.state_dir
    return Pruned(
        sessions=prune_archived(sessions_dir(config), now - keep.sessions) if keep.sessions else 0,
        ledger=prune_ledger(state / "usage.db", ledger_cutoff(now, keep.ledger, config.timezone)) if keep.ledger else 0,
        journal=prune_journal(journal_path(config), now - keep.journal),
        run_logs=_prune_run_logs(state, now - keep.run_logs) if keep.run_logs else 0,
        files=_prune_files(config, now - keep.files) if keep.files else 0,
    )


def _prune_run_logs(state: Path, before: float) -> int:
    """Cron run log entries and trigger deliveries from before `before`."""
    from bot.scheduler.run_log import RunLog
    from bot.triggers.deliveries import deliveries_path, prune_deliveries

    return RunLog(state / "cron_runs.jsonl").prune(before) + prune_deliveries(deliveries_path(state), before)


def _prune_files(config: Config, before: float) -> int:
    """The chats' files recorded before `before`, records and files both, and staged files no agent took."""
    from bot.agents.inbox import prune_staged
    from bot.files.records import FileBook

    staged = prune_staged(config.state_dir, before)
    if not files_path(config).exists():
        return staged
    book = FileBook(files_path(config), config.workspace)
    try:
        return staged + book.prune(before)
    finally:
        book.close()


def prune_shared(config: Config, now: float) -> Pruned:
    """This home's files, and on the redis bus Redis's call records and archived sessions too."""
    pruned = prune_state(config, now)
    if config.bus.backend != "redis" or config.bus.url is None:
        return pruned
    from bot.cluster.redis import RedisState
    from bot.ops.redis_retention import prune_redis

    state = RedisState(config.bus.url, config.bus.prefix)
    try:
        cutoff = ledger_cutoff(now, config.retention.ledger or 0.0, config.timezone)
        sessions, calls = prune_redis(state, config.retention, cutoff, now)
    finally:
        state.client.close()
    return Pruned(pruned.sessions + sessions, pruned.ledger + calls, pruned.journal, pruned.run_logs, pruned.files)


class RetentionTask:
    """Prunes at start and then once a day, in a thread; a failed pass is logged and tried again the next day."""

    def __init__(
        self,
        config: Config,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._config = config
        self._clock = clock
        self._sleep = sleep
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._every_day(), name="retention")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _every_day(self) -> None:
        while True:
            try:
                pruned = await asyncio.to_thread(prune_shared, self._config, self._clock())
                logger.info(
                    "retention: pruned %d archived sessions, %d ledger rows, %d journal rows, %d run log entries, "
                    "%d files",
                    pruned.sessions,
                    pruned.ledger,
                    pruned.journal,
                    pruned.run_logs,
                    pruned.files,
                )
            except Exception:
                logger.exception("retention: pruning failed; trying again in a day")
            await self._sleep(DAY)


def state_sizes(config: Config) -> str:
    """One line for `relaybot status`: the disk taken by each kind of state."""
    state = config.state_dir
    sizes = {
        "sessions": _size(sessions_dir(config)),
        "ledger": _size(state / "usage.db"),
        "journal": _size(journal_path(config)),
        "run logs": _size(state / "cron_runs.jsonl"),
        "logs": _size(state / "logs"),
    }
    return ", ".join(f"{name} {_human(size)}" for name, size in sizes.items())


def _size(path: Path) -> int:
    if path.is_file():
        return sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())  # with -wal files
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return 0


def _human(size: int) -> str:
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}"
        size //= 1024
    return f"{size} GiB"
