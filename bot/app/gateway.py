"""The gateway: the agent plus every enabled channel behind one channel manager, and the scheduler."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bot.access.activation import Activations
from bot.agent.chat_models import ChatModels
from bot.agents.handle import AgentHandle
from bot.agents.heartbeats import AgentHeartbeats
from bot.app.agent_rpc import control_handlers
from bot.app.agent_wiring import AgentApp, agent_roster
from bot.app.backend import deliveries_for, stores_for
from bot.app.channel_kinds import ChatBot, chat_bots
from bot.app.chat_channels import access_policies, add_chat_channels, channel_manager, check_webhooks_served
from bot.app.trigger_wiring import GatewayTriggers
from bot.cluster.roles import Role
from bot.config.paths import control_socket
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.events import EventBus
from bot.hooks.hook_events import GatewayStart, GatewayStop
from bot.llm.types import Provider
from bot.ops.control import ControlServer
from bot.ops.health import GatewayHealth
from bot.ops.reload import ConfigReload, ReloadReport
from bot.ops.retention import RetentionTask
from bot.ops.scheduler_leadership import SchedulerLeadership
from bot.ops.session_ops import session_handlers
from bot.retry import RetryPolicy
from bot.scheduler.cron import CronService
from bot.scheduler.heartbeat import HeartbeatService
from bot.telemetry.prometheus import PrometheusFigures
from bot.telemetry.switch import start_telemetry
from bot.tools.cron import CronTool
from bot.triggers.desk import trigger_sender
from channels.gateway.manager import ChannelManager
from channels.gateway.watchdog import is_fresh

if TYPE_CHECKING:
    from aiohttp import web

    from bot.telemetry.otel import OtelTelemetry
    from channels.api.channel import ApiChannel
    from channels.health_http import HealthServer

logger = logging.getLogger(__name__)

CHANNELS_FIRST = 5.0  # seconds the channels get to connect before the model's and scheduler's imports load


def api_channel(
    config: Config,
    manager: ChannelManager,
    agent: AgentApp,
    cron: CronService,
    heartbeat: HeartbeatService,
    health: GatewayHealth | None = None,
    events: EventBus | None = None,
    webhooks: Sequence[web.RouteDef] = (),
) -> ApiChannel:
    """The API channel (WebSocket, OpenAI-compatible endpoint, web chat) with the owner's dashboard; it hears
    `events` (the agent's by default)."""
    from bot.ops.dashboard import Dashboard
    from channels.api.channel import ApiChannel
    from channels.api.transcript import HISTORY, chat_history

    sessions = agent.sessions
    models = ChatModels(config.llm.models, agent.stores.chat_settings())

    def chat_model(key: str) -> str | None:
        choice = models.chosen(key)
        return f"{choice.name} ({choice.alias})" if choice else None

    dashboard = Dashboard(
        manager,
        sessions.summaries,
        agent.ledger,
        config.timezone,
        cron,
        agent.pairing,
        config.heartbeat,
        heartbeat,
        chat_model=chat_model,
    )

    def history(key: str) -> list[dict[str, str]]:
        return chat_history(sessions.recent(key, 4 * HISTORY))

    return ApiChannel(
        manager.publisher("api"),
        config.channels.api,
        events or agent.events,
        dashboard,
        history=history,
        health=health,
        webhooks=webhooks,
    )


class Gateway:
    """The agent plus every enabled channel, behind one channel manager; `role` picks which parts run here."""

    def __init__(
        self,
        config: Config,
        provider: Provider | None = None,
        channel_retry: RetryPolicy | None = None,
        start_retry: RetryPolicy | None = None,
        role: Role = "all",
    ) -> None:
        stores = stores_for(config)
        bus = stores.bus()
        self.leases = stores.leases()
        if role != "all" and self.leases is None:
            raise ConfigError(f"--role {role} needs bus.backend: redis (the local bus lives in one process)")
        self.config = config
        self.role = role
        self.agent = AgentApp(config, provider, bus, stores=stores)
        self.roster = agent_roster(config, self.agent, on_build=self._agent_built)
        self.roster.grant_questions(self.agent)
        self.bots = chat_bots(config)
        self.names = [bot.key for bot in self.bots]
        self._notices = stores.ignore_notices()
        self._activations = Activations(stores.chat_settings())
        self.manager = channel_manager(
            config,
            self.agent,
            self.bots,
            stores,
            start_retry,
            channel_retry,
            self._notices,
            self._activations,
            self.roster,
        )
        check_webhooks_served(config, self.names)
        webhooks = add_chat_channels(self.manager, config, self.bots, stores, channel_retry, self.roster.staging)
        for channel_class in self.agent.plugins.channels:
            self.names.append(channel_class.name)
            self.manager.add(channel_class(self.manager.publisher(channel_class.name)))
        self.triggers: GatewayTriggers | None = None
        if config.triggers and role != "worker":  # the webhooks are served where the channels run
            running = [*self.names, "api"] if config.channels.api.enabled else self.names
            self.triggers = GatewayTriggers(config, self.agent.bus, running, deliveries_for(config))
            webhooks = [*webhooks, *self.triggers.routes]
            if self.triggers.relay is not None:
                self.manager.add(self.triggers.relay)
        self.outcomes, self.relay, run_events = stores.relays(self.agent.events)
        self.cron = stores.cron(self.agent.bus, self.agent.events, self.outcomes)
        self.agent.registry.register(CronTool(self.cron, config.timezone))
        self.heartbeat = HeartbeatService(
            config.heartbeat,
            config.workspace,
            config.timezone,
            lambda: self.agent.loop.last_owner_chat,
            self.agent.loop.is_busy,
            self.agent.bus.publish_inbound,
            self.agent.events,
            record=stores.heartbeat_record(),
            outcomes=self.outcomes,
        )
        self.started_at = time.time()
        served = config.channels.api.enabled or config.health.port is not None  # /metrics has a listener
        figures = PrometheusFigures(self.agent.events, self.agent.bus.stats) if served else None
        self.health = GatewayHealth(config, self.manager, figures, is_fresh)
        self.health_server: HealthServer | None = None
        self.telemetry: OtelTelemetry | None = None
        self.retention = RetentionTask(config)
        self.api: ApiChannel | None = None
        # Split roles: workers forward their run events, a gateway's API channel hears them beside its own.
        wanted = role == "worker" or (role == "gateway" and config.channels.api.enabled)
        self.run_events = run_events if wanted else None
        self.api_events = self.agent.events
        if self.run_events is not None and role == "gateway":
            self.api_events = EventBus()
            self.agent.events.subscribe(self.api_events.emit)
        if config.channels.api.enabled:
            self.api = api_channel(
                config, self.manager, self.agent, self.cron, self.heartbeat, self.health, self.api_events, webhooks
            )
            self.manager.add(self.api)
            self.names.append("api")
            if self.triggers is not None:
                adopt = self.api.adopt_run
                self.triggers.desk.watch(lambda run: adopt(run.run_id, trigger_sender(run.trigger), run.session_key))
        elif config.health.port is not None:
            from channels.health_http import HealthServer

            self.health_server = HealthServer(config.health.host, config.health.port, self.health, webhooks)
        self.lost_lease = asyncio.Event()
        self.reloader = ConfigReload(config, self._apply_config)
        handlers = {
            "cron.changed": self._cron_changed,
            "cron.run": self._cron_run,
            "status": self._status,
            "reload": self._reload,
            **control_handlers(self.api),
            **session_handlers(self.agent.bus.publish_inbound),
            **(self.triggers.control_handlers() if self.triggers is not None else {}),
        }
        self.control = ControlServer(control_socket(config), handlers)
        self.agent_heartbeats = AgentHeartbeats(self.roster, self.outcomes)
        self.scheduler = SchedulerLeadership(
            self.cron,
            self.heartbeat,
            self.control,
            self.leases,
            stores.job_store_module,
            self.lost_lease,
            self.agent_heartbeats,
        )

    async def start(self) -> None:
        self.telemetry = start_telemetry(self.config.telemetry, self.agent.events, self.agent.bus.stats)
        if self.triggers is not None:
            self.triggers.start(self.api_events)
        if self.health_server is not None:
            await self.health_server.start()
        if self.role == "gateway":
            await self.agent.bus.start()  # a gateway runs no turns: no agent loop, no MCP servers
        else:
            await self.agent.start(warm=False, consume=False)
            await self.roster.start()
        if self.relay is not None:
            await self.relay.start(listen=self.role != "gateway")
        if self.run_events is not None:
            await (
                self.run_events.forward(self.agent.events)
                if self.role == "worker"
                else self.run_events.replay(self.api_events)
            )
        if self.role != "worker":
            if self.leases is not None:
                relayed = [self.triggers.relay.key] if self.triggers and self.triggers.relay else []
                await self.leases.hold_channels(self.names, self._lost_channel, relayed)
            await self.manager.start()
        if self.role != "gateway":
            if self.role == "all":
                await self._channels_first()
            self.agent.warm_up()
            await self.scheduler.start(self.agent.warmed)
        await self.retention.start()
        await self.agent.plugins.hooks.run("gateway_start", GatewayStart(tuple(self.names)))

    async def _channels_first(self) -> None:
        """Wait until each channel has tried to connect once (at most CHANNELS_FIRST seconds).

        Imports hold the GIL wherever they run, so the model's and the scheduler's, seconds of CPU together,
        load after the channels' rather than beside them: launch to connected is then the channels' own work.
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CHANNELS_FIRST):
                await self.manager.tried()

    async def _agent_built(self, app: AgentHandle) -> None:
        """A further agent's cron tool: jobs go on the gateway's one scheduler and run where their chat is bound."""
        app.registry.register(CronTool(self.cron, app.config.timezone))
        await self.agent_heartbeats.built(app)

    async def _lost_channel(self) -> None:
        """Another gateway holds a channel credential now: stop receiving at once, then stop the process."""
        logger.error("a channel lease was lost; this gateway stops receiving")
        await self.manager.stop()
        self.lost_lease.set()

    async def stop(self) -> None:
        """Stop intake, let running turns finish within `shutdown_grace`, flush the outbox, leave the rest pending."""
        await self.agent.plugins.hooks.run("gateway_stop", GatewayStop())
        await self.retention.stop()
        self.agent.bus.close_intake()
        await self.scheduler.stop()
        grace = self.config.shutdown_grace
        started = time.monotonic()
        await self.roster.drain(grace)
        if not await self.manager.flush(max(grace - (time.monotonic() - started), 0.1)):
            logger.warning("stopping with unsent replies; they are sent at the next start")
        await self.manager.stop()
        if self.leases is not None:
            await self.leases.release()
        if self.relay is not None:
            await self.relay.stop()
        await self.roster.stop()
        if self.run_events is not None:
            await self.run_events.stop()
        await self.agent.stop()
        if self.health_server is not None:
            await self.health_server.stop()
        if self.telemetry is not None:
            await self.telemetry.stop()
        if self.triggers is not None:
            self.triggers.stop()

    async def reload(self) -> ReloadReport:
        """Re-read config.yaml and apply its live keys from the next turn (`relaybot reload`, SIGHUP)."""
        return await self.reloader.reload()

    async def _reload(self, request: dict[str, Any]) -> dict[str, Any]:
        return (await self.reload()).as_dict()

    async def _apply_config(self, config: Config) -> None:
        """The live part of a reloaded config: access, the agent's models, budgets, tools and personas, heartbeat."""
        from bot.logs import set_level

        previous, self.config = self.config, config
        bots, pairing_for = self._running_bots(config), self.roster.pairing_for
        self.manager.set_access(
            access_policies(config, self.agent, bots, self._notices, self._activations, pairing_for)
        )
        self.agent.reconfigure(config)
        await self.roster.reconfigure(config, config.shutdown_grace)
        await self.agent_heartbeats.reconfigure()
        if config.heartbeat != previous.heartbeat:
            await self.heartbeat.reconfigure(config.heartbeat)
        if config.log_level is not None:
            set_level(config.log_level)

    def _running_bots(self, config: Config) -> list[ChatBot]:
        """The bots this gateway runs, with `config`'s settings; one it no longer lists keeps its old ones until
        the restart that removes it (adding or removing a bot needs one)."""
        fresh = {bot.key: bot for bot in chat_bots(config)}
        return [fresh.get(bot.key, bot) for bot in self.bots]

    async def _cron_changed(self, request: dict[str, Any]) -> dict[str, Any]:
        self.cron.wakeup()
        return {"ok": True}

    async def _status(self, request: dict[str, Any]) -> dict[str, Any]:
        channels = {name: health.as_dict() for name, health in self.manager.health().items()}
        return {"ok": True, "started_at": self.started_at, "channels": channels, "context": self.agent.budget.cramped}

    async def _cron_run(self, request: dict[str, Any]) -> dict[str, Any]:
        job = next((job for job in self.cron.jobs() if job.id == str(request.get("id"))), None)
        if job is None:
            return {"ok": False, "error": "no such job"}
        if job.payload.chat.channel_key not in self.names:
            return {"ok": False, "error": f"its target {job.payload.target} is on a channel that is not enabled"}
        record = await self.cron.run_now(job.id)
        if record is None:
            return {"ok": False, "error": "no such job"}
        return {"ok": record.ok, "delivered": record.delivered, "error": record.error}

    async def __aenter__(self) -> Gateway:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()
