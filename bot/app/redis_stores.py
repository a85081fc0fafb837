"""The redis backend: every shared store in the bot's Redis, so gateways, workers and the CLI see one state."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.app.stores import StoresStatus
from bot.cluster.redis import RedisState
from bot.config.schema import Config
from bot.ops.redis_scheduler_line import ClusterLine
from bot.ops.scheduler_line import SchedulerLine

if TYPE_CHECKING:
    from bot.access.flood import RateLimit
    from bot.access.notices import IgnoreNotices
    from bot.access.pairing import Pairing
    from bot.agent.owner_dm import OwnerDM
    from bot.bus import MessageBus
    from bot.bus.redis.bus import RedisBus
    from bot.chats.settings import ChatSettingsStore
    from bot.cluster.roles import ClusterLeases
    from bot.cluster.run_events import RunEventRelay
    from bot.events import EventBus
    from bot.memory.backend import MemoryBackend
    from bot.ops.gateway_lock import GatewayLock
    from bot.plugins.allowlist import AllowList
    from bot.scheduler.cron import CronService
    from bot.scheduler.heartbeat_record import HeartbeatRecord
    from bot.scheduler.outcomes import OutcomeRelay
    from bot.sessions.session import Sessions
    from bot.usage.ledger import Ledger
    from channels.catchup import RecentChats


class RedisStores:
    """Stores under `bus.prefix` in the Redis at `bus.url`; the scheduler is whoever holds its lease."""

    job_store_module = "apscheduler.jobstores.redis"

    def __init__(self, config: Config) -> None:
        assert config.bus.url is not None
        self._config = config
        self.state = RedisState(config.bus.url, config.bus.prefix)
        self._bus: RedisBus | None = None  # the bus `bus()` last made, which the cluster's leases ride on

    def bus(self) -> RedisBus:
        from bot.bus.redis.bus import RedisBus

        bus = self._config.bus
        assert bus.url is not None
        self._bus = RedisBus(bus.url, prefix=bus.prefix, lease=bus.worker_lease, claim_idle=bus.claim_idle)
        return self._bus

    def sessions(self) -> Sessions:
        from bot.sessions.redis_store import RedisSessionStore

        agent = self._config.agent
        return RedisSessionStore(
            self.state,
            tail=agent.memory_window,
            max_sessions=agent.session_cache_size,
            max_bytes=int(agent.session_cache_mb * 1024 * 1024),
        )

    def owner_dm(self) -> OwnerDM:
        from bot.agent.owner_dm import RedisOwnerDM

        return RedisOwnerDM(self.state)

    def memory(self) -> MemoryBackend:
        from bot.memory.backend import MemoryBackend
        from bot.memory.locks import RedisScopeLocks
        from bot.memory.redis_members import RedisMembers
        from bot.sessions.redis_logs import RedisLogs

        locks = RedisScopeLocks(self.state, self._config.workspace)
        home = None
        if self._config.memory.index == "redis":
            from bot.memory.index.redis.store import RedisIndexes

            home = RedisIndexes(self.state)
        return MemoryBackend(locks, RedisLogs(self.state), RedisMembers(self.state), local=False, home=home)

    def pairing(self) -> Pairing:
        from bot.access.redis_pairing import RedisPairingBook

        return RedisPairingBook(self.state, max_pending=self._config.access.max_pending)

    def chat_settings(self) -> ChatSettingsStore:
        from bot.chats.redis_settings import RedisChatSettings

        return RedisChatSettings(self.state)

    def allow_list(self) -> AllowList:
        from bot.plugins.redis_allowlist import RedisAllowList

        return RedisAllowList(self.state)

    def rate_limit(self) -> RateLimit:
        from bot.access.redis_flood import RedisSenderRateLimit

        return RedisSenderRateLimit(self.state, self._config.access.rate_limit)

    def ignore_notices(self) -> IgnoreNotices:
        from bot.access.redis_notices import RedisIgnoreNotices

        return RedisIgnoreNotices(self.state)

    def ledger(self) -> Ledger:
        from bot.usage.redis_ledger import RedisUsageLedger

        return RedisUsageLedger(self.state, self._config.timezone)

    def heartbeat_record(self) -> HeartbeatRecord:
        from bot.scheduler.heartbeat_record import RedisHeartbeatRecord

        return RedisHeartbeatRecord(self.state)

    def relays(self, events: EventBus) -> tuple[EventBus, OutcomeRelay | None, RunEventRelay | None]:
        from bot.cluster.run_events import RunEventRelay
        from bot.events import EventBus
        from bot.scheduler.outcomes import OutcomeRelay

        outcomes = EventBus()
        return outcomes, OutcomeRelay(self.state, events, outcomes), RunEventRelay(self.state)

    def cron(
        self, bus: MessageBus | None = None, events: EventBus | None = None, outcomes: EventBus | None = None
    ) -> CronService:
        from bot.scheduler.cron import CronService

        config = self._config
        return CronService(
            config.state_dir,
            config.timezone,
            config.scheduler.misfire_grace,
            bus,
            events,
            shared=self.state,
            outcomes=outcomes,
        )

    def active_chats(self, channel: str) -> RecentChats:
        from channels.redis_catchup import RedisActiveChats

        return RedisActiveChats(self.state, channel)

    def leases(self) -> ClusterLeases | None:
        from bot.cluster.roles import ClusterLeases

        assert self._bus is not None, "leases ride on the bus: make it with bus() first"
        return ClusterLeases(self._bus, self._config)

    def process_lock(self) -> GatewayLock | None:
        return None  # processes share Redis, not this home's lock

    def scheduler_line(self) -> SchedulerLine:
        return ClusterLine(self.state, self.bus, self.cron)

    def describe(self) -> StoresStatus:
        lines = [f"bus:       redis at {self.state.url}", *(f"  {line}" for line in _cluster_lines(self.state))]
        return StoresStatus("sessions in redis", lines)

    async def aclose(self) -> None:
        await self.state.aclose()


def _cluster_lines(state: RedisState) -> list[str]:
    """The cluster view from Redis, or one line saying why it cannot be read."""
    from redis.exceptions import RedisError

    from bot.bus.redis.bus import RedisBus
    from bot.cluster.status import describe_cluster

    try:
        return asyncio.run(describe_cluster(RedisBus(state.url, prefix=state.prefix, consumer="status")))
    except (RedisError, OSError) as exc:
        return [f"cannot reach redis: {exc}"]
