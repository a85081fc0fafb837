"""The embedded backend: every store in files under this home, for one process."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.app.stores import StoresStatus
from bot.config.paths import control_socket, gateway_lock_path, journal_path, sessions_dir
from bot.config.schema import Config
from bot.ops.gateway_lock import GatewayLock
from bot.ops.scheduler_line import ControlSocketLine, SchedulerLine

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
    from bot.plugins.allowlist import AllowList
    from bot.scheduler.cron import CronService
    from bot.scheduler.heartbeat_record import HeartbeatRecord
    from bot.scheduler.outcomes import OutcomeRelay
    from bot.sessions.session import Sessions
    from bot.usage.ledger import Ledger
    from channels.catchup import RecentChats


class LocalStores:
    """State files in `state_dir`; the running gateway is reached over its control socket."""

    job_store_module = "apscheduler.jobstores.sqlalchemy"

    def __init__(self, config: Config) -> None:
        self._config = config

    def bus(self) -> MessageBus:
        from bot.bus import LocalBus

        return LocalBus(journal_path(self._config))

    def sessions(self) -> Sessions:
        from bot.sessions.store import SessionStore

        agent = self._config.agent
        return SessionStore(
            sessions_dir(self._config),
            tail=agent.memory_window,
            max_sessions=agent.session_cache_size,
            max_bytes=int(agent.session_cache_mb * 1024 * 1024),
        )

    def owner_dm(self) -> OwnerDM:
        from bot.agent.owner_dm import LastOwnerDM

        return LastOwnerDM(self._config.state_dir / "owner_dm.json")

    def memory(self) -> MemoryBackend:
        from bot.memory.backend import MemoryBackend
        from bot.memory.index.bulk import ChildIndexer
        from bot.memory.locks import ScopeLocks
        from bot.memory.members import FileMembers
        from bot.sessions.logs import FileLogs

        state = self._config.state_dir
        logs, members = FileLogs(sessions_dir(self._config)), FileMembers(state / "memory_scopes")
        return MemoryBackend(ScopeLocks(), logs, members, local=True, bulk=ChildIndexer(sessions_dir(self._config)))

    def pairing(self) -> Pairing:
        from bot.access.pairing import PairingBook

        return PairingBook(self._config.state_dir / "pairing.json", max_pending=self._config.access.max_pending)

    def chat_settings(self) -> ChatSettingsStore:
        from bot.chats.settings import LocalChatSettings

        return LocalChatSettings(self._config.state_dir / "chat_settings.db")

    def allow_list(self) -> AllowList:
        from bot.plugins.allowlist import LocalAllowList

        return LocalAllowList(self._config.state_dir / "approvals_allowed.db")

    def rate_limit(self) -> RateLimit:
        from bot.access.flood import SenderRateLimit

        return SenderRateLimit(self._config.access.rate_limit)

    def ignore_notices(self) -> IgnoreNotices:
        from bot.access.notices import NoticesInProcess

        return NoticesInProcess()

    def ledger(self) -> Ledger:
        from bot.usage.ledger import UsageLedger

        return UsageLedger(self._config.state_dir / "usage.db")

    def heartbeat_record(self) -> HeartbeatRecord:
        from bot.scheduler.heartbeat_record import HeartbeatRecord

        return HeartbeatRecord()

    def relays(self, events: EventBus) -> tuple[EventBus, OutcomeRelay | None, RunEventRelay | None]:
        return events, None, None

    def cron(
        self, bus: MessageBus | None = None, events: EventBus | None = None, outcomes: EventBus | None = None
    ) -> CronService:
        from bot.scheduler.cron import CronService

        config = self._config
        return CronService(
            config.state_dir, config.timezone, config.scheduler.misfire_grace, bus, events, outcomes=outcomes
        )

    def active_chats(self, channel: str) -> RecentChats:
        from channels.catchup import ActiveChats

        return ActiveChats(self._config.state_dir / "catchup" / f"{channel}.json")

    def leases(self) -> ClusterLeases | None:
        return None

    def process_lock(self) -> GatewayLock | None:
        return GatewayLock(gateway_lock_path(self._config))

    def scheduler_line(self) -> SchedulerLine:
        return ControlSocketLine(control_socket(self._config))

    def describe(self) -> StoresStatus:
        from bot.bus.journal import describe_journal

        sessions = sessions_dir(self._config)
        count = len(list(sessions.glob("*.jsonl"))) if sessions.exists() else 0
        return StoresStatus(f"{count} sessions", [f"delivery:  {describe_journal(journal_path(self._config))}"])

    async def aclose(self) -> None:
        """Nothing to close: each store opens its files as it goes."""
