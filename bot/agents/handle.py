"""What the roster, questions and heartbeats need of one running agent: its handle, and the builders it comes from."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from bot.access.pairing import Pairing
    from bot.agent.context.builder import ContextBuilder
    from bot.agent.loop import AgentLoop
    from bot.agent.owner_dm import OwnerDM
    from bot.bus import MessageBus
    from bot.config.schema import Config, LLMConfig
    from bot.events import EventBus
    from bot.llm.types import Provider
    from bot.plugins.loader import Plugins
    from bot.scheduler.heartbeat_record import HeartbeatRecord
    from bot.sessions.session import Sessions
    from bot.tools.base import ToolRegistry


class ModelSource(Protocol):
    """Metered model providers: one per model setting, billed to the agent that holds the source."""

    def provider(self, llm: LLMConfig) -> Provider: ...


class AgentHandle(Protocol):
    """One running agent: its name and config, its loop, the parts it shares with its gateway, and its lifecycle."""

    @property
    def name(self) -> str: ...

    @property
    def config(self) -> Config: ...

    @property
    def loop(self) -> AgentLoop: ...

    @property
    def bus(self) -> MessageBus: ...

    @property
    def events(self) -> EventBus: ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def pairing(self) -> Pairing: ...

    @property
    def sessions(self) -> Sessions: ...

    @property
    def context(self) -> ContextBuilder: ...

    @property
    def models(self) -> ModelSource: ...

    @property
    def plugins(self) -> Plugins: ...

    async def start(self, warm: bool = True) -> None: ...

    async def stop(self) -> None: ...

    def reconfigure(self, config: Config) -> None: ...


class AgentStores(Protocol):
    """The stores of an agent the roster has not built (yet): its pairing book, owner DM and heartbeat record."""

    def pairing(self) -> Pairing: ...

    def owner_dm(self) -> OwnerDM: ...

    def heartbeat_record(self) -> HeartbeatRecord: ...


BuildAgent = Callable[["Config", str], AgentHandle]
"""Makes agent `name` from its derived config, sharing the default agent's bus, events and model connections."""
StoresFor = Callable[["Config"], AgentStores]
"""The stores a config's backend names."""
