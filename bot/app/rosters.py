"""The roster that consumes the bus's inbound messages: a gateway's of every configured agent, or a roster of one."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager

from bot.agents.handle import AgentHandle
from bot.agents.roster import AgentRoster
from bot.app.agent_wiring import AgentApp, SharedParts
from bot.app.backend import stores_for
from bot.config.agent_configs import agent_names
from bot.config.schema import Config


def agent_roster(
    config: Config,
    default: AgentApp,
    on_build: Callable[[AgentHandle], Awaitable[None]] | None = None,
    configured: list[str] | None = None,
) -> AgentRoster:
    """The roster of `default` and the further agents `config` lists, each sharing `default`'s bus, events and
    model connections, with the stores its own config names; `configured` names the gateway's agents when the
    roster serves only some."""

    def build(derived: Config, name: str) -> AgentApp:
        shared = SharedParts(default.bus, default.events, default.providers)
        return AgentApp(derived, stores=stores_for(derived), shared=shared, name=name)

    return AgentRoster(config, default, build, stores_for, on_build, configured)


def roster_of_one(agent: AgentApp) -> AgentRoster:
    """A roster whose only agent is `agent`, whatever agents and bindings its config lists (the terminal chat's)."""
    alone = agent.config.model_copy(update={"agents": [], "bindings": []})
    return agent_roster(alone, agent, configured=agent_names(agent.config))


@asynccontextmanager
async def answering(agent: AgentApp, warm: bool = True) -> AsyncIterator[AgentRoster]:
    """`agent` started and its roster of one taking the bus's messages; on exit the roster stops, then the agent."""
    roster = roster_of_one(agent)
    async with AsyncExitStack() as stack:
        await agent.start(warm)
        stack.push_async_callback(agent.stop)
        await roster.start()
        stack.push_async_callback(roster.stop)
        yield roster
