"""The gateway's agents behind one dispatcher: each message goes to the agent its chat is bound to.

The default agent is built with the gateway; every other agent on its first message (or question), so an idle
agent costs its config and nothing else: no task, no thread, no open file.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from bot.access.pairing import Pairing
from bot.agents.bindings import Bindings, Route, routed_bindings
from bot.agents.handle import AgentHandle, BuildAgent, StoresFor
from bot.agents.inbox import deliver_files, has_files, staging_folder
from bot.agents.questions import ask_agent
from bot.agents.which_agent import which_agent_answer
from bot.bus import InboundMessage, OutboundMessage
from bot.commands.catalogue import AGENT
from bot.commands.parse import Invocation
from bot.commands.router import CommandRouter, Handler
from bot.config.agent_configs import agent_config, agent_names
from bot.config.schema import Config
from bot.config.schema_agents import DEFAULT_AGENT
from bot.errors import ProviderError, ToolError
from bot.setup.home import InitReport, init_workspace
from bot.tools.ask_agent import AskAgentTool
from bot.tools.base import ToolContext

logger = logging.getLogger(__name__)

UNAVAILABLE = "Sorry, the assistant for this chat could not start. The operator has been told in the logs."


class AgentRoster:
    """Routes the bus's messages to the agents' loops by `bindings`; builds an agent when it is first needed."""

    def __init__(
        self,
        config: Config,
        default: AgentHandle,
        build: BuildAgent,
        stores: StoresFor,
        on_build: Callable[[AgentHandle], Awaitable[None]] | None = None,
        configured: list[str] | None = None,
    ) -> None:
        self.config = config
        # A roster of one (the terminal chat's) still names the gateway's other agents in /agent.
        self._configured = configured
        self.default = default
        self._build = build
        self.stores = stores
        self._on_build = on_build  # the gateway's part of a new agent: the cron tool, its heartbeat
        self._bindings = Bindings(routed_bindings(config))
        self.staging = staging_folder(config.state_dir)  # where the channels save what chats send
        self._apps: dict[str, AgentHandle] = {DEFAULT_AGENT: default}
        self._pairings: dict[str, Pairing] = {}
        self._building = asyncio.Lock()
        self._waiting: dict[str, list[InboundMessage]] = {}  # messages for an agent being built, in order
        self._builds: set[asyncio.Task[None]] = set()
        self._dispatcher: asyncio.Task[None] | None = None
        self._commands: CommandRouter[Handler[str]] = CommandRouter("roster")
        self._commands.add(AGENT, self._which_agent)

    @property
    def built(self) -> dict[str, AgentHandle]:
        """The agents running now, by name (the default one always)."""
        return dict(self._apps)

    def route(self, message: InboundMessage) -> Route:
        """The agent that answers the message's chat, and the binding that chose it."""
        return self._bindings.route(message.chat, message.server_id)

    def pairing_for(self, message: InboundMessage) -> Pairing:
        """The pairing book of the agent the message goes to (the default one's under `pairing: shared`)."""
        name = self.route(message).agent
        entry = next((entry for entry in self.config.agents if entry.name == name), None)
        if entry is None or entry.pairing == "shared":
            return self.default.pairing
        if name in self._apps:
            return self._apps[name].pairing
        if name not in self._pairings:
            self._pairings[name] = self.stores(agent_config(self.config, name)).pairing()
        return self._pairings[name]

    async def agent(self, name: str) -> AgentHandle:
        """The running agent `name`, built and started on first use (its workspace seeded from the template)."""
        if (app := self._apps.get(name)) is not None:
            return app
        async with self._building:
            if (app := self._apps.get(name)) is not None:
                return app
            config = agent_config(self.config, name)
            if not config.workspace.exists():
                init_workspace(config.workspace, InitReport())
            app = self._build(config, name)
            self.grant_questions(app)
            if self._on_build is not None:
                await self._on_build(app)
            await app.start(warm=False)
            self._apps[name] = app
            logger.info("agent %s started (workspace %s)", name, config.workspace)
            return app

    def grant_questions(self, app: AgentHandle) -> None:
        """Give `app` the ask_agent tool while its config grants it other agents (the grant read at each call)."""
        offered = AskAgentTool.name in app.registry.names()
        if app.config.tools.ask_agent and not offered:
            app.registry.register(AskAgentTool(lambda: app.config.tools.ask_agent, partial(self._ask, app)))
        elif offered and not app.config.tools.ask_agent:
            app.registry.unregister(AskAgentTool.name)

    async def _ask(self, asker: AgentHandle, name: str, question: str, ctx: ToolContext) -> str:
        try:
            asked = await self.agent(name)
        except Exception as exc:
            logger.exception("[%s] agent %s could not start", ctx.session_key, name)
            raise ToolError(f"agent {name} is unavailable") from exc
        try:
            return await ask_agent(asker, asked, question, ctx)
        except ProviderError as exc:
            raise ToolError(f"agent {name} could not answer: its language model is unavailable") from exc

    async def start(self) -> None:
        """Begin taking the bus's inbound messages."""
        self._dispatcher = asyncio.create_task(self._dispatch(), name="agents-dispatch")

    async def _dispatch(self) -> None:
        bus = self.default.bus
        while True:
            message = await bus.consume_inbound()
            try:
                await self.accept(message)
            except Exception:
                logger.exception("[%s] could not accept message %s", message.chat.session_key, message.id)

    async def accept(self, message: InboundMessage) -> None:
        """Answer /agent here; hand anything else to its agent's loop, the agent built first when it is not yet (in
        a task of its own, so other chats go on meanwhile; an agent that cannot start: an apology). Its files move
        first from the staging folder into that agent's workspace inbox."""
        route = self.route(message)
        if has_files(message):
            message = await self._deliver_files(message, route.agent)
        if (routed := self._commands.route(message)) is not None:
            await self._reply(message, await routed[1](message, routed[0]), "reply")
            return
        app = self._apps.get(route.agent)
        if app is not None and route.agent not in self._waiting:
            await app.loop.accept(message)
            return
        waiting = self._waiting.setdefault(route.agent, [])
        waiting.append(message)
        if len(waiting) == 1:  # other agents' chats go on while this one is built
            task = asyncio.create_task(self._build_then_accept(route.agent), name=f"agent-build:{route.agent}")
            self._builds.add(task)
            task.add_done_callback(self._builds.discard)

    async def _which_agent(self, message: InboundMessage, found: Invocation) -> str:
        if self._configured is not None:
            return which_agent_answer(self.route(message), self._configured, fixed=True)
        return which_agent_answer(self.route(message), agent_names(self.config))

    async def _deliver_files(self, message: InboundMessage, name: str) -> InboundMessage:
        """The message with its staged files in agent `name`'s workspace inbox; as it came when they cannot move."""
        app = self._apps.get(name)
        workspace = app.config.workspace if app is not None else agent_config(self.config, name).workspace
        try:
            return await asyncio.to_thread(deliver_files, message, self.staging, workspace / "inbox")
        except OSError as exc:
            logger.warning(
                "[%s] files left in %s, not moved to agent %s: %s", message.chat.session_key, self.staging, name, exc
            )
            return message

    async def _build_then_accept(self, name: str) -> None:
        """Build agent `name`, then hand it the messages that waited for it, in their order."""
        try:
            app = await self.agent(name)
        except Exception:
            logger.exception("agent %s could not start", name)
            for message in self._waiting.pop(name, []):
                await self._reply(message, UNAVAILABLE, "error")
            return
        waiting = self._waiting[name]
        while waiting:  # a message that arrives meanwhile joins the queue
            await app.loop.accept(waiting.pop(0))
        del self._waiting[name]

    async def _reply(self, message: InboundMessage, text: str, kind: str) -> None:
        reply = OutboundMessage(
            chat=message.chat,
            text=text,
            in_reply_to=message.id,
            reply_to_platform_id=message.platform_message_id,
            kind="error" if kind == "error" else "reply",
            id=f"{message.id}:reply",
        )
        await self.default.bus.publish_outbound(reply, [message.id])

    async def drain(self, grace: float) -> None:
        """Stop taking messages and give every agent's running turns up to `grace` seconds."""
        await self._stop_dispatching()
        await asyncio.gather(*(app.loop.drain(grace) for app in self._apps.values()))

    async def stop(self) -> None:
        """Stop every agent but the default one (the gateway stops that one last, with the shared parts)."""
        await self._stop_dispatching()
        for name in [name for name in self._apps if name != DEFAULT_AGENT]:
            await self._apps.pop(name).stop()

    async def _stop_dispatching(self) -> None:
        """Stop taking messages; those waiting for an agent to be built stay pending in the bus for the next start."""
        tasks = [*self._builds, *([self._dispatcher] if self._dispatcher else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._dispatcher = None
        self._waiting.clear()

    async def reconfigure(self, config: Config, grace: float = 10.0) -> None:
        """A reloaded config: new bindings from the next message; removed agents stopped (their running turns get
        `grace`); an agent whose workspace moved is rebuilt on its next message; the rest take their live keys."""
        self.config = config
        self._bindings = Bindings(routed_bindings(config))
        self._pairings.clear()
        names = set(agent_names(config))
        for name, app in list(self._apps.items()):
            if name == DEFAULT_AGENT:
                self.grant_questions(app)  # the gateway reconfigured the default agent itself
                continue
            derived = agent_config(config, name) if name in names else None
            if derived is not None and derived.workspace == app.config.workspace:
                app.reconfigure(derived)
                self.grant_questions(app)
                continue
            del self._apps[name]
            await app.loop.drain(grace)
            await app.stop()
            logger.info(
                "reload: agent %s %s", name, "removed" if derived is None else "moved; rebuilt on its next message"
            )
