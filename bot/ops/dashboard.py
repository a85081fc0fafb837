"""The owner's dashboard, as data and actions: the same services the CLI drives, for the web page at /admin."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import date, datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from bot.access.pairing import Pairing
from bot.bus.contract import DeadLetters
from bot.config.schema import HeartbeatConfig
from bot.ops.dead_letters import AgentOf, drop_letters, list_letters, retry_letters
from bot.scheduler.cron import CronService
from bot.usage.ledger import Ledger

EPOCH = date(1970, 1, 1)
RECENT_SESSIONS = 20
USAGE_DAYS = 14
NO_FAILURES = {"last_error": None, "failures": 0}  # a channel not yet started


class ChannelState(Protocol):
    """A channel's connection state, as the channel manager reports it."""

    @property
    def state(self) -> str: ...

    def as_dict(self) -> dict[str, Any]: ...


class ChannelCounts(Protocol):
    """Messages a channel published and delivered since the gateway started."""

    @property
    def inbound(self) -> int: ...

    @property
    def outbound(self) -> int: ...


class ChannelView(Protocol):
    """What the dashboard reads from the channel manager."""

    def health(self) -> Mapping[str, ChannelState]: ...

    def counts(self) -> Mapping[str, ChannelCounts]: ...


class HeartbeatView(Protocol):
    """What the dashboard reads from the heartbeat service: when it last ran and what came of it."""

    @property
    def last_run(self) -> float | None: ...

    @property
    def last_outcome(self) -> str | None: ...


class Dashboard:
    """A snapshot of channels, sessions, usage, cron jobs, pairing and heartbeat; and the owner's actions on them."""

    def __init__(
        self,
        channels: ChannelView,
        sessions: Callable[[float], list[dict[str, Any]]],
        ledger: Ledger,
        timezone: str,
        cron: CronService,
        pairing: Pairing,
        heartbeat: HeartbeatConfig,
        heartbeat_runs: HeartbeatView,
        clock: Callable[[], float] = time.time,
        chat_model: Callable[[str], str | None] = lambda key: None,
        dead_letters: tuple[DeadLetters, AgentOf] | None = None,
    ) -> None:
        self._channels = channels
        self._sessions = sessions
        self._ledger = ledger
        self._zone = ZoneInfo(timezone)
        self._cron = cron
        self._pairing = pairing
        self._heartbeat = heartbeat
        self._heartbeat_runs = heartbeat_runs
        self._clock = clock
        self._chat_model = chat_model
        self._dead_letters = dead_letters  # the bus's failed messages, and which agent each chat goes to

    async def snapshot(self) -> dict[str, Any]:
        """Everything the page shows, as JSON data; the session files are read in a worker thread."""
        since = self._clock() - USAGE_DAYS * 86400
        summaries = await asyncio.to_thread(self._sessions, since)
        tokens = {group.key: group.tokens for group in self._ledger.grouped("chat", since)}
        sessions = [{**s, "tokens": tokens.get(s["key"], 0)} for s in summaries]
        recent = sorted(sessions, key=lambda s: -s["last_activity"])[:RECENT_SESSIONS]
        return {
            "channels": self._channel_rows(),
            "sessions": [{**s, "model": self._chat_model(s["key"])} for s in recent],
            "usage": self._usage_per_day(since),
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
            "heartbeat": {
                **self._heartbeat.model_dump(),
                "last_run": self._heartbeat_runs.last_run,
                "last_outcome": self._heartbeat_runs.last_outcome,
            },
            "dead_letters": await list_letters(*self._dead_letters) if self._dead_letters else [],
        }

    async def act(self, request: dict[str, Any]) -> dict[str, Any]:
        """Run one action: cron.run, cron.remove, pairing.approve, pairing.revoke, queue.retry or queue.drop."""
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
            case "queue.retry" | "queue.drop" if self._dead_letters is not None:
                dead, ids = self._dead_letters[0], [str(request.get("id"))]
                if request["op"] == "queue.retry":
                    done = bool(await retry_letters(dead, ids))
                else:
                    done = bool(await drop_letters(dead, ids))
                return {"ok": True} if done else {"ok": False, "error": "no such dead letter"}
        return {"ok": False, "error": "unknown action"}

    def _channel_rows(self) -> list[dict[str, Any]]:
        """Each channel: connected, state since when, last start error, messages in and out."""
        health, counts = self._channels.health(), self._channels.counts()
        rows = []
        for name, count in counts.items():
            state = health.get(name)
            fields = state.as_dict() if state else {"state": "starting", "since": self._clock(), **NO_FAILURES}
            rows.append(
                {
                    "name": name,
                    "connected": fields["state"] == "connected",
                    **fields,
                    "messages_in": count.inbound,
                    "messages_out": count.outbound,
                }
            )
        return rows

    def _usage_per_day(self, since: float) -> list[dict[str, Any]]:
        """Tokens per local day from the usage ledger, oldest first."""
        offset = datetime.fromtimestamp(self._clock(), self._zone).utcoffset()
        days = self._ledger.daily(since, offset.total_seconds() if offset else 0.0)
        return [{"day": (EPOCH + timedelta(days=number)).isoformat(), "tokens": tokens} for number, tokens in days]
