"""The agent: everything but the channels, built from the config and the stores."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from bot.agent.commands.account import AccountCommands
from bot.agent.consolidation import MemoryConsolidator
from bot.agent.context.auto_recall import AutoRecall
from bot.agent.context.budget import BudgetedProvider, ContextBudget
from bot.agent.edits import REMEMBERED as EDITS_REMEMBERED
from bot.agent.loop import AgentLoop
from bot.agent.loop_parts import LoopParts
from bot.agent.persona.chat_models import ChatModels, chosen_llm
from bot.agent.persona.routes import Persona, PersonaRouter, personas_from
from bot.agent.persona.runners import PersonaTurns
from bot.agent.subagents import SubagentManager
from bot.agent.turn.runner import TurnRunner
from bot.app import file_tools, voice
from bot.app.agent_parts import (
    approval_mode,
    build_registry,
    context_builder,
    image_model,
    plugins_for,
    provider_factory,
    role_tools,
    skill_library,
)
from bot.app.backend import stores_for
from bot.app.channel_kinds import upload_limits
from bot.app.stores import Stores
from bot.bus import InboundMessage, LocalBus, MessageBus, OutboundMessage
from bot.chats.rules import ChatRulesBook
from bot.config.schema import Config, LLMConfig, ModelChoiceConfig
from bot.config.schema_agents import DEFAULT_AGENT
from bot.events import EventBus, MessageFailed
from bot.llm.context_window import ContextWindow
from bot.llm.transcription import SpeechModel, Transcriber
from bot.llm.types import Provider, Warmable
from bot.memory.index.recall import IndexRecall
from bot.memory.index.scopes import QUICK_SEARCH, RECHECK, MemoryIndexes
from bot.memory.index.semantic import semantic_memory
from bot.plugins.approvals import ExecApprovals
from bot.retry import RetryPolicy
from bot.setup.folders import prepare_folders
from bot.tools.ask import AskUserTool, Questions
from bot.tools.base import ToolRegistry
from bot.tools.image import GenerateImageTool
from bot.tools.mcp.servers import MCPServers
from bot.tools.protected import ProtectedPaths
from bot.tools.recall import RecallTool
from bot.tools.spawn import SpawnTool
from bot.usage.budgets import BudgetGuard
from bot.usage.metered_images import MeteredImages
from bot.usage.metered_speech import MeteredSpeech
from bot.usage.model_stack import ModelStack, ProviderPool, SwappableProvider

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SharedParts:
    """What every agent of one gateway shares: the bus, the events and the model connections."""

    bus: MessageBus
    events: EventBus
    providers: ProviderPool


class AgentApp:
    """Everything but the channels: bus, events, provider, budget, skills, tools, sessions, memory, agent loop."""

    def __init__(
        self,
        config: Config,
        provider: Provider | None = None,
        bus: MessageBus | None = None,
        retry: RetryPolicy | None = None,
        stores: Stores | None = None,
        shared: SharedParts | None = None,
        name: str = DEFAULT_AGENT,
        edits_remembered: int = EDITS_REMEMBERED,
    ) -> None:
        self.config = config
        self.name = name
        self._edits_remembered = edits_remembered  # messages of recent turns an edit may still reach
        self.stores = stores or stores_for(config)
        self.owns_shared = shared is None  # the default agent starts and stops what the others borrow
        self.bus: MessageBus = shared.bus if shared else bus or LocalBus()
        self.events = shared.events if shared else EventBus()
        if shared is None:  # the bus's own dead letters (the crash limit, failed turns) reach the owner's notice
            self.bus.dead_letters.on_inbound_failed(
                lambda message, reason: self.events.emit(MessageFailed(message.chat, message.id, reason))
            )
        self.providers = shared.providers if shared else ProviderPool(provider_factory(config, provider, retry))
        prepare_folders(config)
        self.ledger = self.stores.ledger()
        self.guard = BudgetGuard(config.budgets, self.ledger, config.timezone, notify_owner=self._notify_owner)
        self.models = ModelStack(self.providers, self.ledger, self.guard)
        self.provider = SwappableProvider(self.models.provider(config.llm))
        self.budget = ContextBudget(ContextWindow(config.llm), config.llm.max_tokens)
        self.skills = skill_library(config)
        self.plugins = plugins_for(config)
        self.files = file_tools.chat_files(config)
        self.registry = self._registry()
        self.pairing = self.stores.pairing()
        self.rules = ChatRulesBook(config.channels.bot_sections(), config.agent.queue_mode)
        self.sessions = self.stores.sessions()
        memory = self.memory_backend = self.stores.memory()
        quick = QUICK_SEARCH if memory.local else 0.0  # logs read over the network are read in a worker thread
        folders = (config.workspace, config.state_dir)
        self.indexes = MemoryIndexes(
            memory.logs,
            memory.members,
            *folders,
            config.timezone,
            quick=quick,
            bulk=memory.bulk,
            home=memory.home,
            recheck=RECHECK,
        )
        self.indexes.semantic = semantic_memory(config.memory.embeddings, self.ledger, self.guard, memory.home)
        self.registry.register(RecallTool(IndexRecall(self.indexes, config.timezone), config.timezone))
        self.memory = self._memory()
        self.context = context_builder(config, self.skills, self.budget, self.files)
        budgeted = self.budgeted = SwappableProvider(BudgetedProvider(self.provider, self.budget, self.plugins.hooks))
        self.runner = self._runner(budgeted, self.registry)
        self._notices: set[asyncio.Task[bool]] = set()
        self.subagents = SubagentManager(
            budgeted,
            self.registry,
            self.events,
            self.sessions,
            self.bus,
            config.agent.max_subagents,
            persona_tools=self._persona_tools,
        )
        self.registry.register(SpawnTool(self.subagents))
        if config.tools.image.model:
            images = MeteredImages(image_model(config), self.ledger, self.guard)
            self.registry.register(GenerateImageTool(images, config.workspace, upload_limits(), self.files))
        self.mcp = MCPServers(
            config.mcp_servers, self.registry, workspace=config.workspace, files=self.files, uploads=upload_limits()
        )
        self.loop = AgentLoop(
            self.bus, self.events, config.agent, config.workspace, self._loop_parts(), self.plugins.hooks
        )
        self._warming: asyncio.Task[None] | None = None

    def _registry(self) -> ToolRegistry:
        """The config's tools and the plugins', with the approvals (risky exec, the bot's own rules) as a hook."""
        config = self.config
        rules = ProtectedPaths(config.workspace, config.tools.protected_paths)
        registry = build_registry(config, self.skills, self.plugins.hooks, rules)
        for tool in [*file_tools.file_tools(config, self.files, self.ledger, self.guard), *self.plugins.tools]:
            registry.register(tool)
        questions = Questions()
        registry.register(AskUserTool(questions, min(config.tools.ask_timeout, 0.9 * config.agent.turn_timeout)))
        self.plugins.hooks.prompts.on(questions.take)
        wait = min(config.tools.exec.approval_timeout, config.agent.turn_timeout)
        self.approvals = approvals = ExecApprovals(
            approval_mode(config),
            config.workspace,
            self.bus.publish_outbound,
            wait,
            rules,
            allowed=self.stores.allow_list(),
            by=config.approvals.by,
        )
        approvals.install(self.plugins.hooks)
        return registry

    def _memory(self) -> MemoryConsolidator:
        config = self.config
        return MemoryConsolidator(
            self.provider,
            self.sessions,
            self.budget,
            config.agent.memory_window,
            config.timezone,
            hooks=self.plugins.hooks,
            locks=self.memory_backend.locks,
            folded=lambda key, scope: self.indexes.folded(scope.directory, key),
        )

    def _loop_parts(self) -> LoopParts:
        config = self.config
        speech = SpeechModel(config.llm) if config.llm.transcription_model else None
        models = self.chat_models = ChatModels(config.llm.models, self.stores.chat_settings())
        self.auto_recall = AutoRecall(self.indexes, config.memory.auto_recall, config.timezone, self.rules)
        self.personas = PersonaTurns(
            self._persona_router(config), self.runner, self._persona_runner, models, self._chosen_runner
        )
        return LoopParts(
            self.runner,
            self.sessions,
            self.context,
            self.memory,
            personas=self.personas,
            account=AccountCommands(self.ledger, self.guard, self.pairing, config.timezone),
            budget=self.budget,
            transcriber=Transcriber(MeteredSpeech(speech, self.ledger, self.guard)) if speech else None,
            owner_dm=self.stores.owner_dm(),
            on_stop=self.subagents.cancel_for,
            rules=self.rules,
            models=models,
            timezone=config.timezone,
            recall=self.auto_recall,
            voice=voice.voice_replies(config, self.ledger, self.guard, self.bus.publish_outbound, self.files),
            approvals=self.approvals,
            edits_remembered=self._edits_remembered,
        )

    def _runner(self, provider: Provider, registry: ToolRegistry) -> TurnRunner:
        agent = self.config.agent
        return TurnRunner(provider, registry, self.events, agent.max_iterations, agent.max_tool_result_chars)

    def _persona_runner(self, persona: Persona) -> TurnRunner:
        """A runner with the persona's model (metered, with fallbacks, fitted to its window) and tools."""
        return self._runner(*self._persona_parts(persona))

    def _chosen_runner(self, persona: Persona | None, choice: ModelChoiceConfig) -> TurnRunner:
        """A runner for a chat's chosen model: the persona's (or default) settings and tools, `choice`'s model."""
        base = persona.llm_config(self.config.llm) if persona else self.config.llm
        return self._runner(*self._model_parts(chosen_llm(base, choice), persona.tools if persona else None))

    def _persona_parts(self, persona: Persona) -> tuple[Provider, ToolRegistry]:
        return self._model_parts(persona.llm_config(self.config.llm), persona.tools)

    def _model_parts(self, llm: LLMConfig, tools: tuple[str, ...] | None) -> tuple[Provider, ToolRegistry]:
        budget = ContextBudget(ContextWindow(llm), llm.max_tokens)
        provider = BudgetedProvider(self.models.provider(llm), budget, self.plugins.hooks)
        registry = self.registry.only(tools) if tools is not None else self.registry
        return provider, registry

    def _persona_tools(self, name: str) -> tuple[Provider, ToolRegistry]:
        """What a sub-agent spawned by persona `name` works with: that persona's model and tool subset."""
        return self._persona_parts(personas_from(self.config.personas, self.config.workspace)[name])

    def reconfigure(self, config: Config) -> None:
        """Take the live part of a reloaded config from the next turn: model, budgets, tool roles, personas, routes."""
        previous, self.config = self.config, config
        self.guard.configure(config.budgets)
        self.registry.set_roles(role_tools(config))
        if config.llm != previous.llm:
            self.provider.swap(self.models.provider(config.llm))
            self.budgeted.swap(BudgetedProvider(self.provider, self.budget, self.plugins.hooks))
        self.rules.reconfigure(config.channels.bot_sections(), config.agent.queue_mode)
        self.chat_models.reconfigure(config.llm.models)
        self.auto_recall.configure(config.memory.auto_recall)
        self.personas.reconfigure(self._persona_router(config))

    def _persona_router(self, config: Config) -> PersonaRouter:
        """Routes, with a group's or topic's own `persona` winning over them."""
        rules = self.rules

        def chat_persona(message: InboundMessage) -> str | None:
            return rules.for_chat(message.chat, message.server_id, message.is_direct).persona

        return PersonaRouter(personas_from(config.personas, config.workspace), config.routes, chat_persona)

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
        """Start the bus (when this agent owns it) and MCP servers; `warm` also starts loading the model's provider
        now. The loop takes messages from a roster (`bot.app.rosters`), the one inbound consumer."""
        if warm:
            self.warm_up()
        if self.owns_shared:
            await self.bus.start()
        await self.mcp.start()

    async def stop(self) -> None:
        await self.subagents.stop()
        await self.loop.stop()
        await self.memory.stop()
        await self.indexes.stop()
        await self.mcp.stop()
        await asyncio.gather(*self._notices, return_exceptions=True)
        self.ledger.close()
        self.files.book.close()
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
        if self.owns_shared:
            await self.bus.stop()
            for _, provider in self.providers.made:
                if isinstance(provider, Warmable):
                    await provider.aclose()
        await self.stores.aclose()

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
