"""The record of cron runs: what ran when, whether it worked, whether its message reached the chat."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from bot.storage.private_file import write_private


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run of a job: when, whether it worked, whether its message reached the chat."""

    job_id: str
    ran_at: float
    ok: bool
    delivered: bool
    error: str | None = None


class RunHistory(Protocol):
    """Where runs are recorded: a local file, or Redis on the redis bus."""

    def append(self, record: RunRecord) -> None: ...

    def latest(self) -> dict[str, RunRecord]: ...


class RunLog:
    """Append-only JSONL of job runs."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def append(self, record: RunRecord) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        with self._path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(record)) + "\n")

    def latest(self) -> dict[str, RunRecord]:
        """The most recent run of each job."""
        if not self._path.exists():
            return {}
        latest: dict[str, RunRecord] = {}
        for line in self._path.read_text(encoding="utf-8").splitlines():
            try:
                record = RunRecord(**json.loads(line))
            except (ValueError, TypeError):
                continue
            latest[record.job_id] = record
        return latest

    def prune(self, before: float) -> int:
        """Drop the runs before `before` (the file is rewritten and swapped in whole); how many went."""
        if not self._path.exists():
            return 0
        kept: list[str] = []
        dropped = 0
        for line in self._path.read_text(encoding="utf-8").splitlines():
            try:
                old = float(json.loads(line)["ran_at"]) < before
            except (ValueError, TypeError, KeyError):
                old = True  # a torn line: nothing can read it
            dropped += old
            if not old:
                kept.append(line + "\n")
        if dropped:
            write_private(self._path, "".join(kept))
        return dropped
