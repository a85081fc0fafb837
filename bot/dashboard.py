"""The owner's dashboard, as data and actions: the same services the CLI drives, for the web page at /admin."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from bot.access import PairingBook
from bot.config import HeartbeatConfig
from bot.scheduler.cron import CronService

RECENT_SESSIONS = 20
USAGE_DAYS = 14


class Dashboard:
    """A snapshot of channels, sessions, usage, cron jobs, pairing and heartbeat; and the owner's actions on them."""

    def __init__(
        self,
        channels: Callable[[], dict[str, bool]],
        sessions_dir: Path,
        cron: CronService,
        pairing: PairingBook,
        heartbeat: HeartbeatConfig,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._channels = channels
        self._sessions_dir = sessions_dir
        self._cron = cron
        self._pairing = pairing
        self._heartbeat = heartbeat
        self._clock = clock

    def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as JSON data."""
        sessions = session_summaries(self._sessions_dir, self._clock() - USAGE_DAYS * 86400)
        return {
            "channels": [{"name": name, "connected": up} for name, up in self._channels().items()],
            "sessions": sorted(sessions, key=lambda s: -s["last_activity"])[:RECENT_SESSIONS],
            "usage": usage_per_day(sessions),
            "cron": [
                {
                    "id": job.id,
                    "name": job.name,
                    "schedule": job.payload.schedule,
                    "target": job.payload.target,
                    "next_run": job.next_run.isoformat() if job.next_run else None,
                    "last_run": asdict(job.last_run) if job.last_run else None,
                }
                for job in self._cron.jobs()
            ],
            "pairing": {
                "pending": [asdict(entry) for entry in self._pairing.pending()],
                "approved": self._pairing.approved(),
            },
            "heartbeat": self._heartbeat.model_dump(),
        }

    async def act(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one action: cron.run, cron.remove, pairing.approve or pairing.revoke."""
        match request.get("op"):
            case "cron.run":
                record = await self._cron.run_now(str(request.get("id")))
                if record is None:
                    return {"ok": False, "error": "no such job"}
                return {"ok": record.ok, "delivered": record.delivered, "error": record.error}
            case "cron.remove":
                removed = self._cron.remove(str(request.get("id")))
                return {"ok": removed} if removed else {"ok": False, "error": "no such job"}
            case "pairing.approve":
                user = self._pairing.approve(str(request.get("channel")), str(request.get("code")))
                return {"ok": True, "user_id": user} if user else {"ok": False, "error": "no such pending code"}
            case "pairing.revoke":
                revoked = self._pairing.revoke(str(request.get("channel")), str(request.get("user_id")))
                return {"ok": revoked} if revoked else {"ok": False, "error": "that sender was not approved"}
        return {"ok": False, "error": "unknown action"}


def session_summaries(directory: Path, since: float) -> list[dict[str, Any]]:
    """Each live session file touched since `since`: key, last activity, messages, tokens, tokens per day."""
    summaries = []
    for path in directory.glob("*.jsonl"):
        if path.name.endswith(".archived.jsonl") or path.stat().st_mtime < since:
            continue
        messages, tokens, last = 0, 0, path.stat().st_mtime
        per_day: dict[str, int] = defaultdict(int)
        day = datetime.fromtimestamp(last, UTC).date().isoformat()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") == "message":
                messages += 1
                day = datetime.fromtimestamp(record.get("ts", last), UTC).date().isoformat()
            elif record.get("type") == "usage":
                used = int(record.get("prompt", 0)) + int(record.get("completion", 0))
                tokens += used
                per_day[day] += used
        key = unquote(path.name.removesuffix(".jsonl"))
        summaries.append(
            {"key": key, "last_activity": last, "messages": messages, "tokens": tokens, "per_day": dict(per_day)}
        )
    return summaries


def usage_per_day(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tokens per UTC day over all sessions, oldest first (from session totals until a usage ledger exists)."""
    days: dict[str, int] = defaultdict(int)
    for session in sessions:
        for day, tokens in session["per_day"].items():
            days[day] += tokens
    return [{"day": day, "tokens": days[day]} for day in sorted(days)]
