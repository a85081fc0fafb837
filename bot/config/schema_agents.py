"""`agents:` and `bindings:`: several agents in one gateway, and which chats each one answers."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from bot.config.section import Section
from bot.errors import ConfigError

DEFAULT_AGENT = "main"
"""The agent the top-level settings describe: it answers every chat no binding names."""
AGENT_NAME = r"^[a-z0-9][a-z0-9_-]{0,31}$"
BINDING_FIELDS = ("thread", "chat", "server", "account", "channel")
"""A binding's match fields, most specific first: the first one a binding sets is its level."""
API_CHANNEL = "api"
API_CLI_CALLER = "cli"
"""`relaybot agent`'s caller name: its runs are the API chats `api:cli:<session>`."""
API_FORM = "an API session is chat: <token name> (cli for `relaybot agent`), thread: <session>"


class AgentEntry(Section):
    """One agent beyond the default: its own workspace and state; each section it sets overrides the top level's."""

    name: str = Field(pattern=AGENT_NAME)
    workspace: Path | None = None  # default: <workspace's folder>/agents/<name>
    pairing: Literal["own", "shared"] = "own"  # shared: the default agent's paired senders are this one's too
    timezone: str | None = None
    llm: dict[str, Any] = {}
    agent: dict[str, Any] = {}
    memory: dict[str, Any] = {}
    tools: dict[str, Any] = {}
    budgets: dict[str, Any] = {}
    heartbeat: dict[str, Any] = {}
    voice: dict[str, Any] = {}
    mcp_servers: dict[str, Any] | None = None
    personas: dict[str, Any] | None = None
    routes: list[Any] | None = None

    def workspace_under(self, default_workspace: Path) -> Path:
        """The agent's workspace: its own `workspace`, else `agents/<name>` beside the default one."""
        return self.workspace or default_workspace.parent / "agents" / self.name

    def overrides(self) -> dict[str, Any]:
        """The top-level sections this agent sets, as it wrote them."""
        sections = ("timezone", "llm", "agent", "memory", "tools", "budgets", "heartbeat", "voice")
        found: dict[str, Any] = {name: getattr(self, name) for name in sections if getattr(self, name)}
        for name in ("mcp_servers", "personas", "routes"):
            if getattr(self, name) is not None:
                found[name] = getattr(self, name)
        return found


class BindingConfig(Section):
    """Routes the chats it matches to `agent`: a channel, one of its bot accounts, a server (guild/team), a chat or
    a topic/thread in it. Every field it sets must match."""

    agent: str
    channel: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    account: str | None = None
    server: str | None = None
    chat: str | None = None
    thread: str | None = None

    @model_validator(mode="after")
    def _thread_in_a_chat(self) -> BindingConfig:
        if self.thread is not None and self.chat is None:
            raise ValueError("a binding with `thread` needs the `chat` it is in")
        return self

    @property
    def level(self) -> str:
        """How specific the binding is: thread › chat › server › account › channel."""
        return next(name for name in BINDING_FIELDS if getattr(self, name) is not None)

    @property
    def rank(self) -> tuple[int, int]:
        """Orders bindings, most specific highest: by level, then by how many fields are set."""
        fields_set = sum(getattr(self, name) is not None for name in BINDING_FIELDS)
        return len(BINDING_FIELDS) - BINDING_FIELDS.index(self.level), fields_set

    def overlaps(self, other: BindingConfig) -> bool:
        """Whether one message could match both: every field both set is equal."""
        return all(
            getattr(self, name) is None or getattr(other, name) is None or getattr(self, name) == getattr(other, name)
            for name in BINDING_FIELDS
        )

    def describe(self) -> str:
        """The match as one line: `discord server 123`, `telegram chat -100 thread 7 (account work)`."""
        parts = [self.channel]
        parts += [f"{name} {getattr(self, name)}" for name in ("server", "chat", "thread") if getattr(self, name)]
        return " ".join(parts) + (f" (account {self.account})" if self.account else "")


def check_agents(agents: list[AgentEntry], bindings: list[BindingConfig], workspace: Path) -> None:
    """Raise ConfigError naming the key: duplicate or reserved names, a shared workspace, a binding to an unknown
    agent, two bindings that tie for one message."""
    names = {DEFAULT_AGENT}
    workspaces = {workspace.expanduser().resolve(): "the top-level workspace"}
    for index, entry in enumerate(agents):
        if entry.name in names:
            taken = "is the top-level agent's name" if entry.name == DEFAULT_AGENT else "is used twice"
            raise ConfigError(f"agent name {entry.name!r} {taken}", f"agents[{index}].name")
        names.add(entry.name)
        place = entry.workspace_under(workspace).expanduser().resolve()
        if place in workspaces:
            raise ConfigError(
                f"{place} is already {workspaces[place]}'s; each agent needs its own", f"agents[{index}].workspace"
            )
        workspaces[place] = f"agent {entry.name}"
    for index, binding in enumerate(bindings):
        if binding.agent not in names:
            raise ConfigError(
                f"unknown agent {binding.agent!r} (agents: {', '.join(sorted(names))})", f"bindings[{index}].agent"
            )
        for earlier in range(index):
            other = bindings[earlier]
            if other.rank == binding.rank and other.overlaps(binding) and other.agent != binding.agent:
                raise ConfigError(
                    f"ties with bindings[{earlier}] ({other.describe()} -> {other.agent}): one chat would match both "
                    "at the same level; make one more specific",
                    f"bindings[{index}]",
                )


def check_reachable(bindings: list[BindingConfig], channels: Collection[str], api_callers: Collection[str]) -> None:
    """Raise ConfigError naming the key of a binding no message can ever match: an unknown channel (the terminal
    chat's too: it always talks to main), or an API binding in another form than `chat: <caller>, thread: <session>`
    (`api_callers`: the token names, and cli)."""
    known = sorted({*channels, API_CHANNEL})
    for index, binding in enumerate(bindings):
        where = f"bindings[{index}]"
        if binding.channel not in known:
            raise ConfigError(
                f"no channel {binding.channel!r}, so it never matches (channels: {', '.join(known)}; "
                "the terminal chat always talks to main)",
                f"{where}.channel",
            )
        if binding.channel != API_CHANNEL:
            continue
        for name in ("account", "server"):
            if getattr(binding, name) is not None:
                raise ConfigError(f"API chats have no {name}, so it never matches; {API_FORM}", f"{where}.{name}")
        if binding.chat is not None and binding.chat not in api_callers:
            callers = ", ".join(sorted(api_callers))
            raise ConfigError(
                f"no API caller {binding.chat!r} (channels.api.tokens names and cli: {callers}), so it never "
                f"matches; {API_FORM}",
                f"{where}.chat",
            )
