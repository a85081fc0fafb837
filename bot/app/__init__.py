"""Composition: build every part from the config, start in order, stop in reverse."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from bot.agent.account import AccountCommands
from bot.agent.budget import BudgetedProvider, ContextBudget, ContextWindow
from bot.agent.context import ContextBuilder
from bot.agent.loop import AgentLoop
from bot.agent.memory.consolidation import MemoryConsolidator
from bot.agent.memory.locks import RedisScopeLocks
from bot.agent.owner_dm import LastOwnerDM, OwnerDM, RedisOwnerDM
from bot.agent.persona_turns import PersonaTurns
from bot.agent.personas import Persona, PersonaRouter, personas_from
from bot.agent.sessions.redis_store import RedisSessionStore
from bot.agent.sessions.session import Sessions
from bot.agent.sessions.store import SessionStore
from bot.agent.subagents import SubagentManager
from bot.agent.turn import TurnRunner
from bot.app.control import ControlServer
from bot.app.gateway_lock import AlreadyRunning, GatewayLock
from bot.app.model_stack import ModelStack
from bot.app.stores import ignore_notices, pairing_book, sender_rate_limit, usage_ledger
from bot.bus import LocalBus, MessageBus, OutboundMessage, Trust
from bot.cancelling import cancel_and_wait
from bot.cluster.redis import RedisState, shared_state
from bot.cluster.roles import ClusterLeases, Role
from bot.config import Config, LLMConfig, home_dir
from bot.errors import ConfigError
from bot.events import EventBus
from bot.llm import Provider, Warmable
from bot.llm.transcription import Transcriber
from bot.plugins.approvals import ApprovalMode, ExecApprovals
from bot.plugins.events import GatewayStart, GatewayStop
from bot.plugins.hooks import Hooks
from bot.plugins.loader import Plugins, load_plugins
from bot.retry import RetryPolicy
from bot.scheduler.cron import CronService
from bot.scheduler.heartbeat import HeartbeatService
from bot.scheduler.heartbeat_record import RedisHeartbeatRecord
from bot.scheduler.outcomes import OutcomeRelay
from bot.setup.filemodes import keep_private
from bot.setup.home import bundled
from bot.skills import SkillLibrary
from bot.tools.base import Tool, ToolRegistry
from bot.tools.cron import CronTool
from bot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from bot.tools.mcp import MCPServers
from bot.tools.message import MessageTool
from bot.tools.netguard import any_address, is_public
from bot.tools.protected import ProtectedPaths
from bot.tools.sandbox import SECRET_NAME, BwrapSandbox, HostShell, Launcher, choose_launcher
from bot.tools.send_file import SendFileTool
from bot.tools.shell import ExecTool
from bot.tools.skills import LoadSkillTool
from bot.tools.spawn import SpawnTool
from bot.tools.web import WebFetchTool, WebSearchTool
from bot.tools.workspace import WorkspacePaths
from bot.usage.budgets import BudgetGuard
from channels.catchup import ActiveChats, CatchesUp, RecentChats

logger = logging.getLogger(__name__)

CHANNELS_FIRST = 5.0  # seconds the channels get to connect before the model's and scheduler's imports load
CHANNEL_CLASSES = {
    "telegram": "channels.telegram:TelegramChannel",
    "discord": "channels.discord:DiscordChannel",
    "slack": "channels.slack:SlackChannel",
}


def load_object(path: str) -> Any:
    """Import `module:attribute`; how the core reaches adapters without importing them statically."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def exec_launcher(config: Config) -> Launcher:
    """Where exec runs: bubblewrap hiding the relaybot home, state, config and the user's home, or the host."""
    exec_config = config.tools.exec
    hidden = (home_dir(), config.state_dir, *([config.source] if config.source else []), Path.home())
    rules = tuple(ProtectedPaths(config.workspace, config.tools.protected_paths).paths)
    sandbox = BwrapSandbox(
        config.workspace, hidden=hidden, network=exec_config.network, extra_env=exec_config.env, read_only=rules
    )
    return choose_launcher(exec_config.sandbox, sandbox, HostShell(os.environ, tuple(config.secrets())))


def approval_mode(config: Config) -> ApprovalMode:
    """`tools.exec.approval`, except that every command asks while `auto` finds no sandbox to run it in."""
    exec_config = config.tools.exec
    if not exec_config.enabled:
        return "off"
    if exec_config.sandbox == "auto" and isinstance(exec_launcher(config), HostShell):
        return "unsandboxed"
    return exec_config.approval


def private_roots(config: Config) -> list[Path]:
    """What relaybot keeps private: the workspace, the state, and the relaybot home when the config lives there."""
    roots = [config.workspace, config.state_dir]
    if config.source is not None and config.source.parent == home_dir().resolve():
        roots.append(config.source.parent)
    return roots


def build_registry(
    config: Config, skills: SkillLibrary, hooks: Hooks | None = None, rules: ProtectedPaths | None = None
) -> ToolRegistry:
    """The tools this bot offers, each given only its part of the config, with the guest set."""
    paths = WorkspacePaths(config.workspace, config.tools.restrict_to_workspace)
    tools: list[Tool] = [ReadFileTool(paths), WriteFileTool(paths), EditFileTool(paths), ListDirTool(paths)]
    if config.tools.exec.enabled:
        launcher = exec_launcher(config)
        if isinstance(launcher, HostShell) and config.tools.exec.sandbox == "auto":
            logger.warning("exec is %s", launcher.description)
        named = [value for name, value in config.tools.exec.env.items() if SECRET_NAME.search(name)]
        secrets = [*config.secrets(), *named]
        tools.append(ExecTool(config.workspace, config.tools.exec.timeout, secrets, launcher, rules))
    search = config.tools.web_search
    tools.append(WebSearchTool(search.api_key.get_secret_value(), search.api_base))
    tools.append(WebFetchTool(any_address if config.tools.web_fetch.allow_private else is_public))
    tools.append(MessageTool())
    tools.append(SendFileTool(WorkspacePaths(config.workspace, restrict=True)))
    tools.append(LoadSkillTool(skills))
    by_role = config.tools.by_role
    roles = {Trust.GUEST: by_role.guest, Trust.USER: by_role.user, Trust.ADMIN: by_role.admin}
    return ToolRegistry(tools, roles, hooks=hooks)


def plugins_for(config: Config) -> Plugins:
    """The plugins from the `relaybot.plugins` entry points and the config's `plugins` list."""
    base = config.source.parent if config.source else Path.cwd()
    return load_plugins([entry.spec for entry in config.plugins], base)


class AgentApp:
    """Everything but the channels: bus, events, provider, budget, skills, tools, sessions, memory, agent loop."""

    def __init__(
        self,
        config: Config,
        provider: Provider | None = None,
        bus: MessageBus | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        from bot.llm import LiteLLMProvider

        def make_provider(llm: LLMConfig) -> Provider:
            if provider is not None and llm == config.llm:
                return provider
            return LiteLLMProvider(llm, retry)

        self.config = config
        self.bus: MessageBus = bus or LocalBus()
        self.events = EventBus()
        self.shared = shared_state(config)
        config.workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
        config.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        keep_private(private_roots(config))
        self.ledger = usage_ledger(config, self.shared)
        self.guard = BudgetGuard(config.budgets, self.ledger, config.timezone, notify_owner=self._notify_owner)
        self.models = ModelStack(make_provider, self.ledger, self.guard)
        self.provider = self.models.provider(config.llm)
        self.budget = ContextBudget(ContextWindow(config.llm), config.llm.max_tokens)
        self.skills = SkillLibrary([bundled("skills"), config.workspace / "skills"])
        self.plugins = plugins_for(config)
        rules = ProtectedPaths(config.workspace, config.tools.protected_paths)
        self.registry = build_registry(config, self.skills, self.plugins.hooks, rules)
        for tool in self.plugins.tools:
            self.registry.register(tool)
        wait = min(config.tools.exec.approval_timeout, config.agent.turn_timeout)
        approvals = ExecApprovals(approval_mode(config), config.workspace, self.bus.publish_outbound, wait, rules)
        approvals.install(self.plugins.hooks)
        self.pairing = pairing_book(config, self.shared)
        self.sessions = self._session_store()
        self.memory = MemoryConsolidator(
            self.provider,
            self.sessions,
            self.budget,
            config.agent.memory_window,
            config.timezone,
            hooks=self.plugins.hooks,
            locks=RedisScopeLocks(self.shared, config.workspace) if self.shared is not None else None,
        )
        budgeted = BudgetedProvider(self.provider, self.budget)
        self.context = ContextBuilder(
            config.workspace,
            config.timezone,
            skills=self.skills,
            max_tool_result_chars=config.agent.max_tool_result_chars,
            memory_chars=self.budget.memory_chars,
            max_inbound_chars=config.agent.max_inbound_chars,
            inline_attachment_chars=config.agent.inline_attachment_chars,
        )
        self.runner = self._runner(budgeted, self.registry)
        self._notices: set[asyncio.Task[None]] = set()
        self.subagents = SubagentManager(
            budgeted, self.registry, self.events, self.sessions, self.bus, config.agent.max_subagents
        )
        self.registry.register(SpawnTool(self.subagents))
        self.mcp = MCPServers(config.mcp_servers, self.registry)
        self.loop = AgentLoop(
            self.bus,
            self.runner,
            self.sessions,
            self.context,
            self.events,
            config.agent,
            config.workspace,
            self.memory,
            on_stop=self.subagents.cancel_for,
            personas=PersonaTurns(
                PersonaRouter(personas_from(config.personas, config.workspace), config.routes),
                self.runner,
                self._persona_runner,
            ),
            account=AccountCommands(self.ledger, self.guard, self.pairing, config.timezone),
            budget=self.budget,
            owner_dm=self._owner_dm(),
            transcriber=Transcriber(config.llm, self.ledger, self.guard) if config.llm.transcription_model else None,
            hooks=self.plugins.hooks,
        )
        self._warming: asyncio.Task[None] | None = None

    def _session_store(self) -> Sessions:
        """Sessions in Redis on the redis backend (any worker may run a session's next turn), else files."""
        agent = self.config.agent
        bounds = {
            "tail": agent.memory_window,
            "max_sessions": agent.session_cache_size,
            "max_bytes": int(agent.session_cache_mb * 1024 * 1024),
        }
        if self.shared is not None:
            return RedisSessionStore(self.shared, **bounds)
        return SessionStore(self.config.state_dir / "sessions", **bounds)

    def _owner_dm(self) -> OwnerDM:
        """The latest owner DM in Redis on the redis backend (the scheduler may run elsewhere), else a file."""
        if self.shared is not None:
            return RedisOwnerDM(self.shared)
        return LastOwnerDM(self.config.state_dir / "owner_dm.json")

    def _runner(self, provider: Provider, registry: ToolRegistry) -> TurnRunner:
        agent = self.config.agent
        return TurnRunner(provider, registry, self.events, agent.max_iterations, agent.max_tool_result_chars)

    def _persona_runner(self, persona: Persona) -> TurnRunner:
        """A runner with the persona's model (metered, with fallbacks, fitted to its window) and tools."""
        llm = persona.llm_config(self.config.llm)
        provider = BudgetedProvider(self.models.provider(llm), ContextBudget(ContextWindow(llm), llm.max_tokens))
        registry = self.registry.only(persona.tools) if persona.tools is not None else self.registry
        return self._runner(provider, registry)

    def _notify_owner(self, text: str) -> None:
        """Send a notice to the chat the owner last wrote from, if any."""
        chat = self.loop.last_owner_chat
        if chat is None:
            return
        notice = OutboundMessage(chat, text, kind="notice")
        task = asyncio.get_running_loop().create_task(self.bus.publish_outbound(notice))
        self._notices.add(task)
        task.add_done_callback(self._notices.discard)

    async def start(self, warm: bool = True) -> None:
        """Start the bus, MCP servers and the loop; `warm` also starts loading the model's provider now."""
        if warm:
            self.warm_up()
        await self.bus.start()
        await self.mcp.start()
        await self.loop.start()

    async def stop(self) -> None:
        await self.subagents.stop()
        await self.loop.stop()
        await self.memory.stop()
        await self.mcp.stop()
        await asyncio.gather(*self._notices, return_exceptions=True)
        self.ledger.close()
        await self.bus.stop()
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
        for provider in self.models.made:
            if isinstance(provider, Warmable):
                await provider.aclose()
        if self.shared is not None:
            await self.shared.aclose()

    def warm_up(self) -> None:
        """Load what the first model call needs (litellm or the fast path's HTTP client, the price table) in the
        background, once."""
        primary = self.models.made[0] if self.models.made else None
        if self._warming is None and isinstance(primary, Warmable):
            self._warming = asyncio.create_task(self._warm_up(primary), name="llm-warm-up")

    async def warmed(self) -> None:
        """Wait until the warm-up, if one was started, has finished (or failed)."""
        if self._warming is not None:
            await asyncio.wait([self._warming])

    @staticmethod
    async def _warm_up(provider: Warmable) -> None:
        """Import and warm the provider; a failure shows again on the first call."""
        try:
            await provider.warm_up()
        except Exception:
            logger.exception("warming up the llm provider failed")

    async def __aenter__(self) -> AgentApp:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


def journal_path(config: Config) -> Path:
    """The gateway's inbox and outbox journal."""
    return config.state_dir / "journal.db"


def make_bus(config: Config) -> MessageBus:
    """The bus the config names: the local journal, or Redis shared with other gateways and workers."""
    if config.bus.backend == "redis":
        from bot.bus.redis import RedisBus

        assert config.bus.url is not None
        return RedisBus(
            config.bus.url, prefix=config.bus.prefix, lease=config.bus.lease, claim_idle=config.bus.claim_idle
        )
    return LocalBus(journal_path(config))


def active_chats(config: Config, shared: RedisState | None, channel: str) -> RecentChats:
    """Where a channel notes its active chats for catch-up: `state/catchup/<channel>.json`, or Redis."""
    if shared is None:
        return ActiveChats(config.state_dir / "catchup" / f"{channel}.json")
    from channels.redis_catchup import RedisActiveChats

    return RedisActiveChats(shared, channel)


def control_socket(config: Config) -> Path:
    """Where a running gateway listens for CLI commands."""
    return config.state_dir / "control.sock"


def enabled_channels(config: Config) -> list[str]:
    """Names of the channels switched on in the config."""
    return [name for name in CHANNEL_CLASSES if getattr(config.channels, name).enabled]


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
        from bot.access.policy import AccessPolicy

        if role != "all" and config.bus.backend != "redis":
            raise ConfigError(f"--role {role} needs bus.backend: redis (the local bus lives in one process)")
        self.config = config
        self.role = role
        self.agent = AgentApp(config, provider, make_bus(config))
        self.leases = ClusterLeases(self.agent.bus, config) if config.bus.backend == "redis" else None
        self.names = enabled_channels(config)
        shared = self.agent.shared
        notices = ignore_notices(shared)
        access = {
            name: AccessPolicy(
                name, config.owners, getattr(config.channels, name), self.agent.pairing, config.roles, notices
            )
            for name in self.names
        }
        self.manager = load_object("channels.manager:ChannelManager")(
            self.agent.bus,
            self.agent.events,
            access,
            start_retry,
            sender_rate_limit(config, shared),
            send_retry=channel_retry,
        )
        for name in self.names:
            channel_class = load_object(CHANNEL_CLASSES[name])
            section = getattr(config.channels, name)
            channel = channel_class(self.manager.publisher(name), section, config.workspace / "inbox", channel_retry)
            if isinstance(channel, CatchesUp):
                channel.remember_chats(active_chats(config, shared, name))
            self.manager.add(channel, section.send_concurrency)
        for channel_class in self.agent.plugins.channels:
            self.names.append(channel_class.name)
            self.manager.add(channel_class(self.manager.publisher(channel_class.name)))

        self.outcomes = EventBus() if shared is not None else self.agent.events
        self.relay = OutcomeRelay(shared, self.agent.events, self.outcomes) if shared is not None else None
        self.cron = CronService(
            config.state_dir,
            config.timezone,
            config.scheduler.misfire_grace,
            self.agent.bus,
            self.agent.events,
            shared=shared,
            outcomes=self.outcomes,
        )
        self.agent.registry.register(CronTool(self.cron, config.timezone))
        self.heartbeat = HeartbeatService(
            config.heartbeat,
            config.workspace,
            config.timezone,
            self.agent.loop,
            self.agent.bus,
            self.agent.events,
            record=RedisHeartbeatRecord(self.agent.shared) if self.agent.shared is not None else None,
            outcomes=self.outcomes,
        )
        self.started_at = time.time()
        if config.channels.api.enabled:
            from bot.app.dashboard import Dashboard
            from channels.api.transcript import HISTORY, chat_history

            dashboard = Dashboard(
                self.manager,
                self.agent.sessions.summaries,
                self.agent.ledger,
                config.timezone,
                self.cron,
                self.agent.pairing,
                config.heartbeat,
                self.heartbeat,
            )
            api = load_object("channels.api:ApiChannel")
            sessions = self.agent.sessions

            def history(key: str) -> list[dict[str, str]]:
                return chat_history(sessions.recent(key, 4 * HISTORY))

            self.manager.add(
                api(self.manager.publisher("api"), config.channels.api, self.agent.events, dashboard, history=history)
            )
            self.names.append("api")
        self._scheduler: asyncio.Task[None] | None = None
        self._scheduling = False
        self.lost_lease = asyncio.Event()
        self.control = ControlServer(
            control_socket(config),
            {"cron.changed": self._cron_changed, "cron.run": self._cron_run, "status": self._status},
        )

    async def start(self) -> None:
        if self.role == "gateway":
            await self.agent.bus.start()  # a gateway runs no turns: no agent loop, no MCP servers
        else:
            await self.agent.start(warm=False)
        if self.relay is not None:
            await self.relay.start(listen=self.role != "gateway")
        if self.role != "worker":
            if self.leases is not None:
                await self.leases.hold_channels(self.names, self._lost_channel)
            await self.manager.start()
        if self.role != "gateway":
            if self.role == "all":
                await self._channels_first()
            self.agent.warm_up()
            if self.leases is not None:
                await self._open_job_store()
                self._scheduler = asyncio.create_task(self._lead_scheduler(), name="scheduler-leader")
            else:
                await self._start_scheduler()
        await self.agent.plugins.hooks.run("gateway_start", GatewayStart(tuple(self.names)))

    async def _channels_first(self) -> None:
        """Wait until each channel has tried to connect once (at most CHANNELS_FIRST seconds).

        Imports hold the GIL wherever they run, so the model's and the scheduler's, seconds of CPU together,
        load after the channels' rather than beside them: launch to connected is then the channels' own work.
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CHANNELS_FIRST):
                await self.manager.tried()

    async def _start_scheduler(self) -> None:
        """Cron, the heartbeat and the control socket the CLI's cron commands reach: in one process only."""
        # After the model's warm-up (a first message may be waiting for it), and in a thread, so the event loop
        # keeps serving the channels while the scheduler's imports load.
        await self.agent.warmed()
        store = "redis" if self.config.bus.backend == "redis" else "sqlalchemy"
        await asyncio.to_thread(importlib.import_module, f"apscheduler.jobstores.{store}")
        await self.cron.start()
        await self.heartbeat.start()
        await self.control.start()
        self._scheduling = True

    async def _open_job_store(self) -> None:
        """Open the shared job store without firing: the cron tool adds and removes jobs on any worker."""
        await asyncio.to_thread(importlib.import_module, "apscheduler.schedulers.asyncio")
        await self.cron.start(paused=True)

    async def _lead_scheduler(self) -> None:
        """Run cron and the heartbeat only while this process holds the scheduler lease."""
        assert self.leases is not None
        await self.leases.hold_scheduler(self._lost_scheduler)
        await self._start_scheduler()

    async def _lost_scheduler(self) -> None:
        """Another process leads the scheduler now: stop cron and the heartbeat at once, then stop the process."""
        logger.error("the scheduler lease was lost; this process stops scheduling")
        await self.heartbeat.stop()
        await self.cron.stop()
        self.lost_lease.set()

    async def _lost_channel(self) -> None:
        """Another gateway holds a channel credential now: stop receiving at once, then stop the process."""
        logger.error("a channel lease was lost; this gateway stops receiving")
        await self.manager.stop()
        self.lost_lease.set()

    async def stop(self) -> None:
        """Stop intake, let running turns finish within `shutdown_grace`, flush the outbox, leave the rest pending."""
        await self.agent.plugins.hooks.run("gateway_stop", GatewayStop())
        self.agent.bus.close_intake()
        if self._scheduling:
            await self.control.stop()
        await cancel_and_wait(self._scheduler)  # on Python 3.11 a Redis call can swallow a plain cancel
        await self.heartbeat.stop()
        await self.cron.stop()
        grace = self.config.shutdown_grace
        started = time.monotonic()
        await self.agent.loop.drain(grace)
        if not await self.manager.flush(max(grace - (time.monotonic() - started), 0.1)):
            logger.warning("stopping with unsent replies; they are sent at the next start")
        await self.manager.stop()
        if self.leases is not None:
            await self.leases.release()
        if self.relay is not None:
            await self.relay.stop()
        await self.agent.stop()

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
        if job.payload.chat.channel not in self.names:
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


async def run_console(config: Config, message: str | None, provider: Provider | None = None) -> int:
    """`relaybot chat`: the agent on a terminal; returns the exit code."""
    agent = AgentApp(config, provider)
    manager = load_object("channels.manager:ChannelManager")(agent.bus, agent.events)
    console = load_object("channels.console:ConsoleChannel")(
        manager.publisher("console"), agent.events, history_file=config.state_dir / "chat_history"
    )
    manager.add(console)
    async with agent:
        await manager.start()
        try:
            await manager.ready("console")
            if message is not None:
                reply = await console.ask(message)
                return 1 if reply.kind == "error" else 0
            await console.repl()
            return 0
        finally:
            await manager.stop()


async def run_gateway(config: Config, role: Role = "all") -> int:
    """`relaybot run`: serve until SIGINT or SIGTERM; 1 at once when another gateway holds this home."""
    if config.bus.backend == "redis":
        await _serve(config, role)  # processes share Redis, not this home's lock
        return 0
    lock = GatewayLock(config.state_dir)
    try:
        lock.acquire()
    except AlreadyRunning as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    try:
        await _serve(config)
    finally:
        lock.release()
    return 0


async def _serve(config: Config, role: Role = "all") -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    gateway = Gateway(config, role=role)
    if role == "worker":
        logger.info("worker %s starting", getattr(gateway.agent.bus, "consumer", ""))
    elif gateway.names:
        logger.info("gateway starting with channels: %s", ", ".join(gateway.names))
    else:
        print(
            "No chat channel is enabled, so nobody can reach the bot yet. Enable one in the config "
            "(for example channels.telegram.enabled: true with its token) and restart, or use "
            "`relaybot chat`. Serving anyway; Ctrl-C stops.",
            file=sys.stderr,
            flush=True,
        )
    async with gateway:
        lost = asyncio.create_task(gateway.lost_lease.wait())
        await asyncio.wait([asyncio.create_task(stop.wait()), lost], return_when=asyncio.FIRST_COMPLETED)
    logger.info("gateway stopped")
