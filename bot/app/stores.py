"""Where shared state lives, chosen once from `bus.backend`: files in this home, or Redis shared by processes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.access.flood import RateLimit
    from bot.access.notices import IgnoreNotices
    from bot.access.pairing import Pairing
    from bot.agent.owner_dm import OwnerDM
    from bot.bus import MessageBus
    from bot.chats.settings import ChatSettingsStore
    from bot.cluster.roles import ClusterLeases
    from bot.cluster.run_events import RunEventRelay
    from bot.events import EventBus
    from bot.memory.backend import MemoryBackend
    from bot.ops.gateway_lock import GatewayLock
    from bot.ops.scheduler_line import SchedulerLine
    from bot.plugins.allowlist import AllowList
    from bot.scheduler.cron import CronService
    from bot.scheduler.heartbeat_record import HeartbeatRecord
    from bot.scheduler.outcomes import OutcomeRelay
    from bot.sessions.session import Sessions
    from bot.usage.ledger import Ledger
    from channels.catchup import RecentChats


@dataclass(frozen=True)
class StoresStatus:
    """`relaybot status`'s view of the stores: where the sessions are, and lines on the bus (the journal's
    backlog, or the cluster as Redis sees it)."""

    sessions: str
    delivery: list[str]


class Stores(Protocol):
    """Hands out every store whose home depends on the backend; the rest of the app never asks which one it is."""

    job_store_module: str  # the apscheduler job store module the cron service will import

    def bus(self) -> MessageBus:
        """The bus `relaybot run` uses: the local journal, or Redis streams shared with other processes."""

    def sessions(self) -> Sessions:
        """The session logs, bounded by the config's cache settings."""

    def owner_dm(self) -> OwnerDM:
        """The chat the owner last wrote from directly."""

    def memory(self) -> MemoryBackend:
        """Memory's parts: scope locks (one consolidation per scope at a time), the session logs the search indexes
        read, and which sessions feed each scope (kept for good: the indexes are caches, this is not)."""

    def pairing(self) -> Pairing:
        """Pending pairing codes and approved senders."""

    def chat_settings(self) -> ChatSettingsStore:
        """What users set for each chat from inside it (activation, model)."""

    def allow_list(self) -> AllowList:
        """The commands and paths an owner chose to allow always (no approval asked)."""

    def rate_limit(self) -> RateLimit:
        """The per-sender flood limit (`access.rate_limit`)."""

    def ignore_notices(self) -> IgnoreNotices:
        """Which ignored senders were logged already."""

    def ledger(self) -> Ledger:
        """The usage ledger: one row per model call."""

    def heartbeat_record(self) -> HeartbeatRecord:
        """When the heartbeat last ran and what came of it."""

    def relays(self, events: EventBus) -> tuple[EventBus, OutcomeRelay | None, RunEventRelay | None]:
        """Where scheduled runs' outcomes arrive, the relay carrying them across processes, and the one carrying
        workers' run events to the gateways' API channels (both None in one process)."""

    def cron(
        self, bus: MessageBus | None = None, events: EventBus | None = None, outcomes: EventBus | None = None
    ) -> CronService:
        """The cron service over this backend's job store, claims and run log."""

    def active_chats(self, channel: str) -> RecentChats:
        """Where `channel` notes its active chats for catch-up."""

    def leases(self) -> ClusterLeases | None:
        """A cluster's channel and scheduler leases, held through the bus `bus()` last made; None in one process."""

    def process_lock(self) -> GatewayLock | None:
        """The lock that keeps one gateway per home; None where processes share Redis instead of a home."""

    def scheduler_line(self) -> SchedulerLine:
        """The way to whoever runs the scheduler, for CLI commands: the gateway's control socket, or Redis."""

    def describe(self) -> StoresStatus:
        """What `relaybot status` says about the stores."""

    async def aclose(self) -> None:
        """Close the connections the stores opened."""
