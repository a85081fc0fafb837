"""The gateway's chat channels: one channel per bot of each enabled platform, each with its access policy."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from bot.access.activation import Activations
from bot.agent.commands.activation import ActivationCommand
from bot.agents.roster import AgentRoster
from bot.app.agent_wiring import AgentApp
from bot.app.channel_kinds import ChatBot
from bot.app.command_menu import command_menu, menu_users
from bot.app.invites import invite_verdict
from bot.app.stores import Stores
from bot.config.schema import Config
from bot.errors import ConfigError
from bot.logs import redactor
from bot.retry import RetryPolicy
from channels.abilities import AdmitsInvites, CatchesUp, ServesWebhook
from channels.gateway.manager import ChannelManager
from channels.platforms import KINDS

if TYPE_CHECKING:
    from aiohttp import web

    from bot.access.notices import IgnoreNotices
    from bot.access.pairing import Pairing
    from bot.access.policy import AccessPolicy
    from bot.bus import InboundMessage


def channel_manager(
    config: Config,
    agent: AgentApp,
    bots: list[ChatBot],
    stores: Stores,
    start_retry: RetryPolicy | None,
    send_retry: RetryPolicy | None,
    notices: IgnoreNotices,
    activations: Activations,
    roster: AgentRoster,
) -> ChannelManager:
    """The manager, with each chat bot's access policy and the sender rate limit."""
    access = access_policies(config, agent, bots, notices, activations, roster.pairing_for)
    reactions = {bot.key: bot.section.reactions for bot in bots}
    return ChannelManager(
        agent.bus,
        agent.events,
        access,
        start_retry,
        stores.rate_limit(),
        send_retry=send_retry,
        reactions=reactions,
        commands=command_menu(agent.plugins.hooks),
        menu_users={bot.key: menu_users(config, bot.platform) for bot in bots},
        mask=redactor(config.secrets()),
    )


def access_policies(
    config: Config,
    agent: AgentApp,
    bots: list[ChatBot],
    notices: IgnoreNotices,
    activations: Activations,
    pairing_for: Callable[[InboundMessage], Pairing] | None = None,
) -> dict[str, AccessPolicy]:
    """Each chat bot's access policy by channel key: owners, roles, allow_from, DM and group rules, groups'
    /activation; owners, roles and identities are the whole gateway's, the rest each bot's own settings."""
    from bot.access.identities import Identities
    from bot.access.policy import AccessPolicy

    people = Identities(config.identities, agent.pairing.people)
    return {
        bot.key: AccessPolicy(
            bot.platform,
            config.owners,
            bot.section,
            agent.pairing,
            config.roles,
            notices,
            agent.rules,
            activations,
            people,
            gate_commands=ActivationCommand(activations),
            pairing_for=pairing_for,
        )
        for bot in bots
    }


def add_chat_channels(
    manager: ChannelManager,
    config: Config,
    bots: list[ChatBot],
    stores: Stores,
    retry: RetryPolicy | None,
    staging: Path,
) -> list[web.RouteDef]:
    """Build one channel per chat bot (those that catch up note their active chats); return their webhook routes.

    Channels save what chats send in `staging`, from where the roster moves it to the answering agent's inbox."""
    routes: list[web.RouteDef] = []
    for bot in bots:
        state = config.state_dir / bot.platform
        channel = bot.kind.build(manager.publisher(bot.key), bot.section, bot.account, staging, state, retry)
        if isinstance(channel, CatchesUp):
            channel.remember_chats(stores.active_chats(bot.key))
        if isinstance(channel, AdmitsInvites):
            channel.gate_invites(invite_verdict(bot.platform, partial(manager.access_of, bot.key)))
        if isinstance(channel, ServesWebhook):
            routes.extend(channel.webhook_routes())
        manager.add(channel, bot.section.send_concurrency)
    return routes


def check_webhooks_served(config: Config, names: list[str]) -> None:
    """A channel its platform calls over HTTP needs the gateway's HTTP server: the API channel or `health.port`."""
    if config.channels.api.enabled or config.health.port is not None:
        return
    for name in names:
        if (kind := KINDS.get(name)) and kind.webhook:
            raise ConfigError(
                "its webhook is served on the gateway's HTTP server: enable channels.api or set health.port",
                f"channels.{name}",
            )
