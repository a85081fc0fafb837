"""The API channel wired to the gateway: its dashboard over the channels, sessions, ledger, cron and heartbeat."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from bot.agent.persona.chat_models import ChatModels
from bot.app.agent_wiring import AgentApp
from bot.config.schema import Config
from bot.config.schema_agents import DEFAULT_AGENT
from bot.events import EventBus
from bot.ops.dead_letters import AgentOf
from bot.ops.health import GatewayHealth
from bot.scheduler.cron import CronService
from bot.scheduler.heartbeat import HeartbeatService
from channels.gateway.manager import ChannelManager

if TYPE_CHECKING:
    from aiohttp import web

    from channels.api.channel import ApiChannel


def api_channel(
    config: Config,
    manager: ChannelManager,
    agent: AgentApp,
    cron: CronService,
    heartbeat: HeartbeatService,
    health: GatewayHealth | None = None,
    events: EventBus | None = None,
    webhooks: Sequence[web.RouteDef] = (),
    agent_of: AgentOf = lambda chat: DEFAULT_AGENT,
) -> ApiChannel:
    """The API channel (WebSocket, OpenAI-compatible endpoint, web chat) with the owner's dashboard; it hears
    `events` (the agent's by default)."""
    from bot.agents.inbox import staging_folder
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
        dead_letters=(agent.bus.dead_letters, agent_of),
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
        staging=staging_folder(config.state_dir),
    )
