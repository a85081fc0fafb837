"""Which agent answers a message: the most specific binding that matches its chat, else the default agent."""

from __future__ import annotations

from dataclasses import dataclass

from bot.bus import ChatRef
from bot.config.schema import Config
from bot.config.schema_agents import DEFAULT_AGENT, BindingConfig
from bot.config.schema_triggers import TRIGGER_CHANNEL


@dataclass(frozen=True, slots=True)
class Route:
    """The agent a chat goes to, and the binding that sent it there (None: no binding matched; the default)."""

    agent: str
    binding: int | None = None
    match: str | None = None

    def describe(self) -> str:
        """One line for `/agent` and `relaybot agents`."""
        if self.binding is None:
            return f"{self.agent} (no binding matches this chat; the default agent answers)"
        return f"{self.agent} (bindings[{self.binding}]: {self.match})"


_UNBOUND = Route(DEFAULT_AGENT)
"""Where a chat no binding matches goes (one frozen value, not one a message)."""


class Bindings:
    """The `bindings:` list as a router; `route` is a pure function of the chat and its server."""

    def __init__(self, bindings: list[BindingConfig]) -> None:
        indexed = sorted(enumerate(bindings), key=lambda pair: pair[1].rank, reverse=True)
        self._ordered = indexed
        self._by_channel: dict[str, list[tuple[int, BindingConfig]]] = {}
        for index, binding in indexed:
            self._by_channel.setdefault(binding.channel, []).append((index, binding))

    def route(self, chat: ChatRef, server_id: str | None = None) -> Route:
        """The most specific binding matching the chat (thread › chat › server › account › channel)."""
        for index, binding in self._by_channel.get(chat.channel, ()):
            if matches(binding, chat, server_id):
                return Route(binding.agent, index, binding.describe())
        return _UNBOUND

    def agents_bound(self) -> list[tuple[int, BindingConfig]]:
        """Every binding with its index in the config, most specific first."""
        return list(self._ordered)


def routed_bindings(config: Config) -> list[BindingConfig]:
    """`bindings:` and one binding per trigger's own session (`trigger:<name>`): to the agent the trigger names,
    else to the one its chat is bound to."""
    chats = Bindings(config.bindings)
    own = [
        BindingConfig(
            agent=trigger.agent or chats.route(trigger.target).agent, channel=TRIGGER_CHANNEL, chat=trigger.name
        )
        for trigger in config.triggers
        if trigger.session == "own"
    ]
    return [*config.bindings, *own]


def matches(binding: BindingConfig, chat: ChatRef, server_id: str | None) -> bool:
    """Whether every field the binding sets equals the chat's."""
    wanted = (
        (binding.channel, chat.channel),
        (binding.account, chat.account),
        (binding.server, server_id),
        (binding.chat, chat.chat_id),
        (binding.thread, chat.thread_id),
    )
    return all(want is None or want == have for want, have in wanted)
