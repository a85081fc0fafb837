"""The gateway: the agents, every enabled channel behind one channel manager, and the scheduler, as one role's parts
started in order and stopped in reverse."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from functools import partial
from typing import TYPE_CHECKING, Any

from bot.access.activation import Activations
from bot.agents.bindings import Bindings
from bot.agents.handle import AgentHandle
from bot.agents.heartbeats import AgentHeartbeats
from bot.app.agent_wiring import AgentApp
from bot.app.api_wiring import api_channel
from bot.app.backend import deliveries_for, stores_for
from bot.app.channel_kinds import ChatBot, chat_bots
from bot.app.chat_channels import access_policies, add_chat_channels, channel_manager, check_webhooks_served
from bot.app.rosters import agent_roster
from bot.app.stores import Stores
from bot.app.trigger_wiring import GatewayTriggers
from bot.bus.messages import ChatRef, OutboundMessage
from bot.cluster.roles import Role
from bot.cluster.run_events import RunEventRelay
from bot.config.paths import control_socket
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.events import EventBus
from bot.hooks.hook_events import GatewayStart, GatewayStop
from bot.llm.types import Provider
from bot.ops.control import ControlServer, Handler
from bot.ops.dead_letter_notice import DeadLetterNotice
from bot.ops.dead_letters import AgentOf, queue_handlers
from bot.ops.gateway_ops import gateway_handlers
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
from channels.gateway.watchdog import is_fresh

if TYPE_CHECKING:
    from aiohttp import web

    from bot.telemetry.otel import OtelTelemetry
    from channels.api.channel import ApiChannel
    from channels.health_http import HealthServer

logger = logging.getLogger(__name__)

CHANNELS_FIRST = 5.0  # seconds the channels get to connect before the model's and scheduler's imports load

Step = Callable[[], Awaitable[object]]
Part = tuple[Step | None, Step | None]
"""A part's start and its stop; either may be None (a part with nothing to do on one side)."""


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
        bus = stores.bus()  # first: the leases ride on it
        self.leases = stores.leases()
        if role != "all" and self.leases is None:
            raise ConfigError(f"--role {role} needs bus.backend: redis (the local bus lives in one process)")
        self.config, self.role, self.bots = config, role, chat_bots(config)
        self._agent_of: AgentOf = lambda chat: Bindings(self.config.bindings).route(chat).agent  # bindings in force
        self.agent = AgentApp(config, provider, bus, stores=stores)
        self._stack = AsyncExitStack()  # what start started, each part's stop above the one before it
        self._stack.push_async_callback(self.agent.stop)  # built (its stores open) now, so always stopped last
        self.roster = agent_roster(config, self.agent, on_build=self._agent_built)
        self.roster.grant_questions(self.agent)
        self._notices, self._activations = stores.ignore_notices(), Activations(stores.chat_settings())
        webhooks = self._channels(stores, start_retry, channel_retry)
        self.outcomes, self.relay, run_events = stores.relays(self.agent.events)
        self.cron, self.heartbeat = self._scheduled(stores)
        self._front_doors(run_events, webhooks)
        self.lost_lease = asyncio.Event()
        self.reloader = ConfigReload(config, self._apply_config)
        self.control = ControlServer(control_socket(config), self._handlers())
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
        self.retention = RetentionTask(config)
        self.dead_letter_notice = DeadLetterNotice(self.api_events, self._tell_owner)  # with the workers' failures
        self.telemetry: OtelTelemetry | None = None

    def _channels(
        self, stores: Stores, start_retry: RetryPolicy | None, channel_retry: RetryPolicy | None
    ) -> Sequence[web.RouteDef]:
        """The channel manager with every enabled chat channel and the plugins'; the webhook routes they serve."""
        config = self.config
        self.names = [bot.key for bot in self.bots]
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
        if config.triggers and self.role != "worker":  # the webhooks are served where the channels run
            running = [*self.names, "api"] if config.channels.api.enabled else self.names
            self.triggers = GatewayTriggers(config, self.agent.bus, running, deliveries_for(config))
            webhooks = [*webhooks, *self.triggers.routes]
            if self.triggers.relay is not None:
                self.manager.add(self.triggers.relay)
        return webhooks

    def _scheduled(self, stores: Stores) -> tuple[CronService, HeartbeatService]:
        """The cron service (with the agent's cron tool over it) and the default agent's heartbeat."""
        config, agent = self.config, self.agent
        cron = stores.cron(agent.bus, agent.events, self.outcomes)
        agent.registry.register(CronTool(cron, config.timezone))
        heartbeat = HeartbeatService(
            config.heartbeat,
            config.workspace,
            config.timezone,
            lambda: agent.loop.last_owner_chat,
            agent.loop.is_busy,
            agent.bus.publish_inbound,
            agent.events,
            record=stores.heartbeat_record(),
            outcomes=self.outcomes,
        )
        return cron, heartbeat

    def _front_doors(self, run_events: RunEventRelay | None, webhooks: Sequence[web.RouteDef]) -> None:
        """Health and the API channel; with split roles, workers forward their run events and a gateway's API
        channel hears them beside its own."""
        config, role, agent = self.config, self.role, self.agent
        served = config.channels.api.enabled or config.health.port is not None  # /metrics has a listener
        figures = PrometheusFigures(agent.events, agent.bus.stats) if served else None
        self.health = GatewayHealth(config, self.manager, figures, is_fresh, agent.bus.stats)
        self.health_server: HealthServer | None = None
        self.api: ApiChannel | None = None
        listening = config.channels.api.enabled or config.ops.dead_letter_notice  # the notice hears workers' failures
        wanted = role == "worker" or (role == "gateway" and listening)
        self.run_events = run_events if wanted else None
        self.api_events = agent.events
        if self.run_events is not None and role == "gateway":
            self.api_events = EventBus()
            agent.events.subscribe(self.api_events.emit)
        if config.channels.api.enabled:
            self.api = api_channel(
                config,
                self.manager,
                agent,
                self.cron,
                self.heartbeat,
                self.health,
                self.api_events,
                webhooks,
                self._agent_of,
            )
            self.manager.add(self.api)
            self.names.append("api")
            if self.triggers is not None:
                adopt = self.api.adopt_run
                self.triggers.desk.watch(lambda run: adopt(run.run_id, trigger_sender(run.trigger), run.session_key))
        elif config.health.port is not None:
            from channels.health_http import HealthServer

            self.health_server = HealthServer(config.health.host, config.health.port, self.health, webhooks)

    def _handlers(self) -> dict[str, Handler]:
        """The control socket's ops: reload, status, cron, the agent RPC and session operations."""
        from channels.api.rpc.control import control_handlers  # the API channel's parts load only in the gateway

        return {
            "reload": self._reload,
            **gateway_handlers(self.cron, self.manager, self.names, lambda: self.agent.budget.cramped),
            **control_handlers(self.api),
            **session_handlers(self.agent.bus.publish_inbound),
            **queue_handlers(self.agent.bus.dead_letters, self._agent_of),
            **(self.triggers.control_handlers() if self.triggers is not None else {}),
        }

    def _parts(self) -> list[Part]:
        """This role's parts in starting order; `stop` stops them in the reverse order."""
        role, agent, hooks = self.role, self.agent, self.agent.plugins.hooks
        parts: list[Part] = [(self._start_telemetry, None)]
        if role != "worker" and self.config.ops.dead_letter_notice:  # before the bus: it hears the crash limit's
            parts.append((at_once(self.dead_letter_notice.start), self.dead_letter_notice.stop))
        if (triggers := self.triggers) is not None:
            parts.append((at_once(partial(triggers.start, self.api_events)), at_once(triggers.stop)))
        if self.health_server is not None:
            parts.append((self.health_server.start, self.health_server.stop))
        if role == "gateway":
            parts.append((agent.bus.start, None))  # a gateway runs no turns: no agent loop, no MCP servers
        else:
            parts += [(partial(agent.start, warm=False), None), (self.roster.start, self.roster.stop)]
        if self.relay is not None:
            parts.append((partial(self.relay.start, listen=role != "gateway"), self.relay.stop))
        if (run_events := self.run_events) is not None:
            relay = (
                partial(run_events.forward, agent.events)
                if role == "worker"
                else partial(run_events.replay, self.api_events)
            )
            parts.append((relay, run_events.stop))
        if role != "worker":
            if self.leases is not None:
                relayed = [triggers.relay.key] if triggers and triggers.relay else []
                hold = partial(self.leases.hold_channels, self.names, self._lost_channel, relayed)
                parts.append((hold, self.leases.release))
            parts.append((self.manager.start, self.manager.stop))
        parts.append((None, self._finish_work))
        if role != "gateway":
            parts.append((self._start_scheduler, self.scheduler.stop))
        parts.append((self.retention.start, self.retention.stop))
        started, stopped = GatewayStart(tuple(self.names)), GatewayStop()
        parts.append((partial(hooks.run, "gateway_start", started), partial(hooks.run, "gateway_stop", stopped)))
        return parts

    async def start(self) -> None:
        """Start this role's parts in order, each stop pushed on the stack once its part has started."""
        for start, stop in self._parts():
            if start is not None:
                await start()
            if stop is not None:
                self._stack.push_async_callback(stop)

    async def stop(self) -> None:
        """Stop what started, in reverse: hooks, retention, the scheduler; then intake closes, running turns get
        `shutdown_grace` and the outbox is flushed (the rest stays pending); then channels, relays, agents."""
        await self._stack.aclose()

    async def _start_telemetry(self) -> None:
        """Export telemetry when configured; its stop goes on the stack only then."""
        self.telemetry = start_telemetry(self.config.telemetry, self.agent.events, self.agent.bus.stats)
        if self.telemetry is not None:
            self._stack.push_async_callback(self.telemetry.stop)

    async def _start_scheduler(self) -> None:
        if self.role == "all":
            await self._channels_first()
        self.agent.warm_up()
        await self.scheduler.start(self.agent.warmed)

    async def _finish_work(self) -> None:
        """Close intake, give running turns `shutdown_grace`, flush the outbox in what is left of it."""
        self.agent.bus.close_intake()
        grace = self.config.shutdown_grace
        started = time.monotonic()
        await self.roster.drain(grace)
        remaining = max(grace - (time.monotonic() - started), 0.1)
        if self.role != "worker" and not await self.manager.flush(remaining):
            logger.warning("stopping with unsent replies; they are sent at the next start")

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

    async def reload(self) -> ReloadReport:
        """Re-read config.yaml and apply its live keys from the next turn (`relaybot reload`, SIGHUP)."""
        return await self.reloader.reload()

    async def _reload(self, request: dict[str, Any]) -> dict[str, Any]:
        return (await self.reload()).as_dict()

    async def _apply_config(self, config: Config) -> None:
        """The live part of a reloaded config: access, the agent's models, budgets, tools and personas, heartbeat."""
        from bot.logs import set_level

        previous, self.config = self.config, config
        bots, pairing_for = running_bots(self.bots, config), self.roster.pairing_for
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

    async def _tell_owner(self, text: str) -> None:
        """A notice in the owner's latest DM, else the first owner's own chat on a channel that runs here."""
        chat = self.agent.loop.last_owner_chat
        if chat is None:
            owners = (ChatRef.parse(owner) for owner in self.config.owners if ":" in owner)
            chat = next((owner for owner in owners if owner.channel_key in self.names), None)
        if chat is None:
            logger.warning("dead letters wait, and no owner's chat is known to tell (see `relaybot queue list`)")
            return
        await self.agent.bus.publish_outbound(OutboundMessage(chat, text, kind="notice"))

    async def __aenter__(self) -> Gateway:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


def running_bots(bots: list[ChatBot], config: Config) -> list[ChatBot]:
    """The bots this gateway runs, with `config`'s settings; one it no longer lists keeps its old ones until
    the restart that removes it (adding or removing a bot needs one)."""
    fresh = {bot.key: bot for bot in chat_bots(config)}
    return [fresh.get(bot.key, bot) for bot in bots]


def at_once(step: Callable[[], object]) -> Step:
    """A synchronous start or stop as a part's step."""

    async def run() -> None:
        step()

    return run
