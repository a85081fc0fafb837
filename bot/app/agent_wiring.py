"""The agent: everything but the channels, built from the config and the stores."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from bot.agent.chat_models import ChatModels, chosen_llm
from bot.agent.commands.account import AccountCommands
from bot.agent.context import ContextBuilder
from bot.agent.context_budget import BudgetedProvider, ContextBudget
from bot.agent.loop import AgentLoop, LoopParts
from bot.agent.memory.auto_recall import AutoRecall
from bot.agent.memory.consolidation import MemoryConsolidator
from bot.agent.memory.file_writes import MemoryFileGuard
from bot.agent.memory.recall_search import IndexRecall
from bot.agent.memory.scope_index import MemoryIndexes
from bot.agent.memory.semantic import semantic_memory
from bot.agent.persona_turns import PersonaTurns
from bot.agent.personas import Persona, PersonaRouter, personas_from
from bot.agent.subagents import SubagentManager
from bot.agent.turn import TurnRunner
from bot.app import file_tools, voice
from bot.app.backend import stores_for
from bot.app.folders import prepare_folders
from bot.app.live_provider import SwappableProvider
from bot.app.model_stack import ModelStack, ProviderFactory
from bot.app.stores import Stores
from bot.bus import InboundMessage, LocalBus, MessageBus, OutboundMessage, Trust
from bot.chats.rules import ChatRulesBook
from bot.config.schema import Config, LLMConfig, ModelChoiceConfig
from bot.events import EventBus
from bot.hooks.handlers import Hooks
from bot.llm.context_window import ContextWindow
from bot.llm.images import ImageModel
from bot.llm.keys import inherited_key
from bot.llm.transcription import SpeechModel, Transcriber
from bot.llm.types import Provider, Warmable
from bot.plugins.approvals import ApprovalMode, ExecApprovals
from bot.plugins.loader import Plugins, load_plugins
from bot.retry import RetryPolicy
from bot.setup.home import bundled
from bot.skills import SkillLibrary
from bot.tools.ask import AskUserTool, Questions
from bot.tools.base import Tool, ToolRegistry
from bot.tools.chat_files import ChatFiles
from bot.tools.files import EditFileTool, ListDirTool, ReadFileTool, WriteFileTool
from bot.tools.image import GenerateImageTool
from bot.tools.launcher import exec_launcher
from bot.tools.mcp import MCPServers
from bot.tools.message import MessageTool
from bot.tools.netguard import any_address, is_public
from bot.tools.protected import ProtectedPaths
from bot.tools.recall import RecallTool
from bot.tools.sandbox import SECRET_NAME, HostShell
from bot.tools.search.choose import search_tool
from bot.tools.send_file import SendFileTool
from bot.tools.shell import ExecTool
from bot.tools.skills import LoadSkillTool
from bot.tools.spawn import SpawnTool
from bot.tools.web import WebFetchTool
from bot.tools.workspace import WorkspacePaths
from bot.usage.budgets import BudgetGuard
from bot.usage.metered_images import MeteredImages
from bot.usage.metered_speech import MeteredSpeech

logger = logging.getLogger(__name__)


def exec_tool(config: Config, rules: ProtectedPaths) -> ExecTool:
    """exec with its launcher, told every secret it must keep out of its output and the rules it may not change."""
    launcher = exec_launcher(config)
    if isinstance(launcher, HostShell) and config.tools.exec.sandbox == "auto":
        logger.warning("exec is %s", launcher.description)
    named = [value for name, value in config.tools.exec.env.items() if SECRET_NAME.search(name)]
    return ExecTool(config.workspace, config.tools.exec.timeout, [*config.secrets(), *named], launcher, rules)


def approval_mode(config: Config) -> ApprovalMode:
    """`tools.exec.approval`, except that every command asks while `auto` finds no sandbox to run it in."""
    exec_config = config.tools.exec
    if not exec_config.enabled:
        return "off"
    if exec_config.sandbox == "auto" and isinstance(exec_launcher(config), HostShell):
        return "unsandboxed"
    return exec_config.approval


def build_registry(
    config: Config, skills: SkillLibrary, hooks: Hooks | None = None, rules: ProtectedPaths | None = None
) -> ToolRegistry:
    """The tools this bot offers, each given only its part of the config, with the guest set."""
    paths = WorkspacePaths(config.workspace, config.tools.restrict_to_workspace)
    memory = MemoryFileGuard(config.workspace / "memory", config.timezone)
    tools: list[Tool] = [
        ReadFileTool(paths),
        WriteFileTool(paths, memory),
        EditFileTool(paths, memory),
        ListDirTool(paths),
    ]
    if config.tools.exec.enabled:
        tools.append(exec_tool(config, rules or ProtectedPaths(config.workspace, config.tools.protected_paths)))
    tools.append(search_tool(config.tools.web_search))
    tools.append(WebFetchTool(any_address if config.tools.web_fetch.allow_private else is_public))
    tools.append(MessageTool())
    tools.append(SendFileTool(WorkspacePaths(config.workspace, restrict=True)))
    tools.append(LoadSkillTool(skills))
    return ToolRegistry(tools, role_tools(config), hooks=hooks)


def role_tools(config: Config) -> dict[Trust, list[str]]:
    """The tool names each role below owner may call (`tools.by_role`)."""
    by_role = config.tools.by_role
    return {Trust.GUEST: by_role.guest, Trust.USER: by_role.user, Trust.ADMIN: by_role.admin}


def image_model(config: Config) -> ImageModel:
    """`tools.image`'s model, with the llm section's API base where it sets none, and its key where the base is
    the llm's (see `bot.llm.keys` for the environment)."""
    image, llm = config.tools.image, config.llm
    api_base = image.api_base or llm.api_base
    own_key = image.api_key.get_secret_value()
    key = inherited_key(own_key, image.api_base, llm.api_key.get_secret_value(), llm.api_base)
    return ImageModel(image.model, api_base, key, image.size, image.quality, image.timeout)


def plugins_for(config: Config) -> Plugins:
    """The plugins from the `relaybot.plugins` entry points and the config's `plugins` list."""
    base = config.source.parent if config.source else Path.cwd()
    return load_plugins([entry.spec for entry in config.plugins], base)


def skill_library(config: Config) -> SkillLibrary:
    """The bundled skills, then the workspace's own."""
    return SkillLibrary([bundled("skills"), config.workspace / "skills"])


def provider_factory(config: Config, given: Provider | None, retry: RetryPolicy | None) -> ProviderFactory:
    """Makes each model's provider; `given` (a test's) serves the config's own model."""

    def make(llm: LLMConfig) -> Provider:
        from bot.llm.provider import ModelProvider

        if given is not None and llm == config.llm:
            return given
        return ModelProvider(llm, retry)

    return make


def context_builder(config: Config, skills: SkillLibrary, budget: ContextBudget, files: ChatFiles) -> ContextBuilder:
    """The system prompt and history builder, within the agent's size limits."""
    agent = config.agent
    return ContextBuilder(
        config.workspace,
        config.timezone,
        skills=skills,
        max_tool_result_chars=agent.max_tool_result_chars,
        memory_chars=budget.memory_chars,
        max_inbound_chars=agent.max_inbound_chars,
        inline_attachment_chars=agent.inline_attachment_chars,
        files=files,
    )


class AgentApp:
    """Everything but the channels: bus, events, provider, budget, skills, tools, sessions, memory, agent loop."""

    def __init__(
        self,
        config: Config,
        provider: Provider | None = None,
        bus: MessageBus | None = None,
        retry: RetryPolicy | None = None,
        stores: Stores | None = None,
    ) -> None:
        self.config = config
        self.stores = stores or stores_for(config)
        self.bus: MessageBus = bus or LocalBus()
        self.events = EventBus()
        prepare_folders(config)
        self.ledger = self.stores.ledger()
        self.guard = BudgetGuard(config.budgets, self.ledger, config.timezone, notify_owner=self._notify_owner)
        self.models = ModelStack(provider_factory(config, provider, retry), self.ledger, self.guard)
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
        self.indexes = MemoryIndexes(memory.logs, memory.members, config.workspace, config.state_dir, config.timezone)
        self.indexes.semantic = semantic_memory(config.memory.embeddings, self.ledger, self.guard)
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
            self.registry.register(GenerateImageTool(images, config.workspace, self.files))
        self.mcp = MCPServers(config.mcp_servers, self.registry, workspace=config.workspace, files=self.files)
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
        approvals = ExecApprovals(
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
        await self.indexes.stop()
        await self.mcp.stop()
        await asyncio.gather(*self._notices, return_exceptions=True)
        self.ledger.close()
        self.files.book.close()
        await self.bus.stop()
        if self._warming is not None:
            self._warming.cancel()
            await asyncio.gather(self._warming, return_exceptions=True)
        for provider in self.models.made:
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
