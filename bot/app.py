"""Composition: build every part from the config, start in order, stop in reverse."""

from __future__ import annotations

import asyncio
import importlib
import logging
import signal
import sys
from typing import Any

from bot.agent.budget import BudgetedProvider, ContextBudget, ContextWindow
from bot.agent.consolidation import MemoryConsolidator
from bot.agent.context import ContextBuilder
from bot.agent.loop import AgentLoop
from bot.agent.sessions import SessionStore
from bot.agent.skills import SkillLibrary
from bot.agent.turn import TurnRunner
from bot.bus import LocalBus, MessageBus
from bot.config import Config
from bot.events import EventBus
from bot.home import bundled
from bot.llm import Provider
from bot.tools.base import ToolRegistry
from bot.tools.skills import LoadSkillTool

logger = logging.getLogger(__name__)

CHANNEL_CLASSES = {
    "telegram": "channels.telegram:TelegramChannel",
    "discord": "channels.discord:DiscordChannel",
    "slack": "channels.slack:SlackChannel",
}


def load_object(path: str) -> Any:
    """Import `module:attribute`; how the core reaches adapters without importing them statically."""
    module, _, attribute = path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def build_registry(config: Config, skills: SkillLibrary) -> ToolRegistry:
    """The tools this bot offers, with the guest set from the config."""
    return ToolRegistry([LoadSkillTool(skills)], guest_tools=config.tools.guest_tools)


class AgentApp:
    """Everything but the channels: bus, events, provider, budget, skills, tools, sessions, memory, agent loop."""

    def __init__(self, config: Config, provider: Provider | None = None, bus: MessageBus | None = None) -> None:
        if provider is None:
            from bot.llm import LiteLLMProvider

            provider = LiteLLMProvider(config.llm)
        self.config = config
        self.bus: MessageBus = bus or LocalBus()
        self.events = EventBus()
        self.provider = provider
        self.budget = ContextBudget(ContextWindow(config.llm), config.llm.max_tokens)
        self.skills = SkillLibrary([bundled("skills"), config.workspace / "skills"])
        self.registry = build_registry(config, self.skills)
        config.workspace.mkdir(parents=True, exist_ok=True)
        self.sessions = SessionStore(config.state_dir / "sessions")
        self.memory = MemoryConsolidator(
            provider, self.sessions, self.budget, config.agent.memory_window, config.timezone
        )
        self.runner = TurnRunner(
            BudgetedProvider(provider, self.budget), self.registry, self.events, config.agent.max_iterations
        )
        self.loop = AgentLoop(
            self.bus,
            self.runner,
            self.sessions,
            ContextBuilder(config.workspace, config.timezone, skills=self.skills),
            self.events,
            config.agent,
            config.workspace,
            self.memory,
        )

    async def start(self) -> None:
        await self.loop.start()

    async def stop(self) -> None:
        await self.loop.stop()
        await self.memory.stop()

    async def __aenter__(self) -> AgentApp:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


def enabled_channels(config: Config) -> list[str]:
    """Names of the channels switched on in the config."""
    return [name for name in CHANNEL_CLASSES if getattr(config.channels, name).enabled]


async def run_console(config: Config, message: str | None, provider: Provider | None = None) -> int:
    """`relaybot chat`: the agent on a terminal; returns the exit code."""
    agent = AgentApp(config, provider)
    console = load_object("channels.console:ConsoleChannel")(agent.bus.publish_inbound, agent.events)
    manager = load_object("channels.manager:ChannelManager")(agent.bus, [console])
    async with agent:
        await manager.start()
        try:
            if message is not None:
                reply = await console.ask(message)
                return 1 if reply.kind == "error" else 0
            await console.repl()
            return 0
        finally:
            await manager.stop()


async def run_gateway(config: Config, stop: asyncio.Event | None = None) -> None:
    """`relaybot run`: the agent and every enabled channel, until SIGINT/SIGTERM or `stop` is set."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    agent = AgentApp(config)
    names = enabled_channels(config)
    channels = [
        load_object(CHANNEL_CLASSES[name])(agent.bus.publish_inbound, getattr(config.channels, name)) for name in names
    ]
    manager = load_object("channels.manager:ChannelManager")(agent.bus, channels)
    if names:
        logger.warning("gateway starting with channels: %s", ", ".join(names))
    else:
        print(
            "No chat channel is enabled, so nobody can reach the bot yet. Enable one in the config "
            "(for example channels.telegram.enabled: true with its token) and restart, or use "
            "`relaybot chat`. Serving anyway; Ctrl-C stops.",
            file=sys.stderr,
            flush=True,
        )
    async with agent:
        await manager.start()
        try:
            await stop.wait()
        finally:
            await manager.stop()
    logger.warning("gateway stopped")
