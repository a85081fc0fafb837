"""The further agents' heartbeats: each agent's own HEARTBEAT.md, interval and owner DM, where the scheduler runs.

An agent that was never used has no workspace and no owner DM, so nothing to beat for: its heartbeat starts once
its workspace exists (at the scheduler's start) or once it is built.
"""

from __future__ import annotations

import logging

from bot.agents.handle import AgentHandle
from bot.agents.roster import AgentRoster
from bot.bus import ChatRef
from bot.config.agent_configs import agent_config, agent_names
from bot.config.schema_agents import DEFAULT_AGENT
from bot.events import EventBus
from bot.scheduler.heartbeat import HeartbeatService

logger = logging.getLogger(__name__)


class AgentHeartbeats:
    """Starts, stops and reconfigures one HeartbeatService per further agent whose `heartbeat.enabled` holds."""

    def __init__(self, roster: AgentRoster, outcomes: EventBus) -> None:
        self._roster = roster
        self._outcomes = outcomes
        self.services: dict[str, HeartbeatService] = {}
        self._running = False

    async def start(self) -> None:
        """Beat for every agent whose workspace exists; later ones join as they are built (`built`)."""
        self._running = True
        for name in agent_names(self._roster.config)[1:]:
            if agent_config(self._roster.config, name).workspace.exists():
                await self._start(name)

    async def built(self, app: AgentHandle) -> None:
        """An agent was built: its heartbeat starts now, while the scheduler runs in this process."""
        if self._running and app.name not in self.services:
            await self._start(app.name)

    async def stop(self) -> None:
        """Stop every agent's heartbeat."""
        self._running = False
        for service in self.services.values():
            await service.stop()
        self.services.clear()

    async def reconfigure(self) -> None:
        """The roster's config changed (a reload): start again with each agent's new settings."""
        if self._running:
            await self.stop()
            await self.start()

    async def _start(self, name: str) -> None:
        config = agent_config(self._roster.config, name)
        if name == DEFAULT_AGENT or not config.heartbeat.enabled:
            return
        stores = self._roster.stores(config)
        remembered = stores.owner_dm()  # the file of an earlier run, or Redis (always current) in a cluster
        roster = self._roster

        def owner_chat() -> ChatRef | None:
            app = roster.built.get(name)
            return app.loop.last_owner_chat if app is not None and config.bus.backend == "local" else remembered.chat

        def busy(session_key: str) -> bool:
            app = roster.built.get(name)
            return app is not None and app.loop.is_busy(session_key)

        bus, events = roster.default.bus, roster.default.events
        service = HeartbeatService(
            config.heartbeat,
            config.workspace,
            config.timezone,
            owner_chat,
            busy,
            bus.publish_inbound,
            events,
            record=stores.heartbeat_record(),
            outcomes=self._outcomes,
            name=name,
        )
        await service.start()
        self.services[name] = service
        logger.info("heartbeat of agent %s started (every %.0fs)", name, config.heartbeat.interval)
