"""The configuration file's shape: `Config` and its smaller sections, validated by pydantic."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, ValidationInfo, field_validator, model_validator

from bot.bus import Trust
from bot.config.channels.sections import ChannelsConfig
from bot.config.durations import Duration
from bot.config.schema_agents import (
    API_CLI_CALLER,
    DEFAULT_AGENT,
    AgentEntry,
    BindingConfig,
    check_agents,
    check_reachable,
)
from bot.config.schema_memory import MemoryConfig
from bot.config.schema_ops import HealthConfig, OpsConfig, RetentionConfig, TelemetryConfig
from bot.config.schema_tools import SERVER_NAME, MCPServerConfig, ToolsConfig
from bot.config.schema_triggers import TRIGGER_CHANNEL, TriggerConfig
from bot.config.schema_voice import VoiceConfig
from bot.config.section import Section
from bot.errors import ConfigError

ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh"]


class ModelChoiceConfig(Section):
    """A model a chat may switch to with `/model <alias>`; `api_base` defaults to `llm`'s, and `api_key` too
    unless `api_base` is set."""

    name: str
    alias: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,30}$")
    api_base: str | None = None
    api_key: SecretStr | None = None


class LLMConfig(Section):
    model: str = "openai/gpt-4o-mini"
    api_key: SecretStr = SecretStr("")
    api_base: str | None = None
    max_tokens: int = Field(default=4096, gt=0)
    temperature: float = Field(default=0.7, ge=0, le=2)
    context_window: int | None = Field(default=None, gt=0)
    timeout: Duration = 120.0
    fast_path: bool = True
    reasoning_effort: ReasoningEffort | None = None
    extra_headers: dict[str, str] = {}
    transcription_model: str | None = None
    transcription_api_base: str | None = None
    transcription_api_key: SecretStr = SecretStr("")
    fallbacks: list[str] = []
    models: list[ModelChoiceConfig] = []

    @field_validator("models")
    @classmethod
    def _unique_aliases(cls, value: list[ModelChoiceConfig]) -> list[ModelChoiceConfig]:
        aliases = [choice.alias for choice in value]
        if "default" in aliases or len(set(aliases)) != len(aliases):
            raise ValueError("each model needs its own alias, and `default` is taken (it means the configured model)")
        return value


class AgentConfig(Section):
    max_iterations: int = Field(default=40, gt=0)
    max_concurrent_turns: int = Field(default=128, gt=0)
    queue_mode: Literal["collect", "followup", "steer"] = "collect"
    memory_window: int = Field(default=100, gt=1)
    max_subagents: int = Field(default=4, gt=0)
    session_cache_size: int = Field(default=256, gt=0)
    session_cache_mb: float = Field(default=32.0, gt=0)
    max_tool_result_chars: int = Field(default=16_000, ge=200)
    turn_timeout: Duration = Field(default=600.0, gt=0)
    max_inbound_chars: int = Field(default=32_000, gt=0)
    inline_attachment_chars: int = Field(default=20_000, ge=0)


class AccessConfig(Section):
    max_pending: int = Field(default=10, gt=0)
    rate_limit: int = Field(default=20, ge=0)


class ApprovalsConfig(Section):
    """Who may decide an approval (a button press or /approve): the owners, or the admins too."""

    by: Literal["owner", "admin"] = "owner"


class SchedulerConfig(Section):
    misfire_grace: Duration = 600.0


class BusConfig(Section):
    """Where inbound and outbound messages travel: the embedded journal, or Redis shared by several processes."""

    backend: Literal["local", "redis"] = "local"
    url: str | None = Field(default=None, validate_default=True)
    lease: Duration = Field(default=6.0, gt=0)
    worker_lease: Duration = Field(default=3.0, gt=0)
    claim_idle: Duration = Field(default=30.0, gt=0)
    prefix: str = Field(default="relaybot", pattern=r"^[A-Za-z0-9_.-]+$")

    @field_validator("url")
    @classmethod
    def _redis_needs_url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if info.data.get("backend") == "redis" and not (value or "").startswith(("redis://", "rediss://", "unix://")):
            raise ValueError("the redis backend needs a URL such as redis://localhost:6379/0")
        return value


_HOURS = re.compile(r"^([01]\d|2[0-3]):[0-5]\d-([01]\d|2[0-3]):[0-5]\d$")
_CHAT_TARGET = re.compile(r"^[a-z]+:[^:\s]+(:[^:\s]+)?$")


class HeartbeatConfig(Section):
    enabled: bool = True
    interval: Duration = 1800.0
    deliver_to: str | None = None
    active_hours: str | None = None

    @field_validator("active_hours")
    @classmethod
    def _hours_range(cls, value: str | None) -> str | None:
        if value is not None and not _HOURS.match(value):
            raise ValueError(f"{value!r} is not a range of hours; use HH:MM-HH:MM such as 08:00-22:00")
        return value

    @field_validator("deliver_to")
    @classmethod
    def _chat_target(cls, value: str | None) -> str | None:
        if value is not None and not _CHAT_TARGET.match(value):
            raise ValueError(f"{value!r} is not a chat; use channel:chat_id such as telegram:123")
        return value


class Limit(Section):
    """A spending cap: tokens (prompt + completion) and/or USD, per day and/or per month; unset = unlimited."""

    daily_tokens: int | None = Field(default=None, ge=0)
    monthly_tokens: int | None = Field(default=None, ge=0)
    daily_usd: float | None = Field(default=None, ge=0)
    monthly_usd: float | None = Field(default=None, ge=0)


ACCOUNT = re.compile(r"^[a-z]+:\S+$")
PERSON = re.compile(r"^[A-Za-z][\w.-]{0,63}$")


class BudgetsConfig(Section):
    """Limits per role (null = unlimited), per-sender overrides, and the cap on background work."""

    guest: Limit | None = Limit(monthly_tokens=5000)
    user: Limit | None = None
    admin: Limit | None = None
    owner: Limit | None = None
    senders: dict[str, Limit] = {}
    background: Limit | None = Limit(daily_usd=1.0)

    @field_validator("senders")
    @classmethod
    def _sender_refs(cls, value: dict[str, Limit]) -> dict[str, Limit]:
        for sender in value:
            if not (ACCOUNT.match(sender) or PERSON.match(sender)):
                raise ValueError(f"{sender!r} is not a sender; use channel:user_id such as telegram:42, or a person")
        return value


_ROUTE = re.compile(r"^(default|[a-z]+|[a-z]+:(chat|guild|team|server):\S+)$")  # Matrix room ids hold colons


class PersonaConfig(Section):
    """A persona: its own model, system file (relative to the workspace), tools and sampling."""

    model: str | None = None
    api_base: str | None = None
    api_key: SecretStr | None = None
    system: str | None = None
    tools: list[str] | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    reasoning_effort: ReasoningEffort | None = None
    streaming: bool | None = None
    auto_recall: bool | None = None  # None: as the chat's rules and memory.auto_recall say


class RouteConfig(Section):
    """Which persona answers where: `discord:guild:1234`, `slack:team:T01`, `telegram:chat:-100`, `slack`, `default`."""

    match: str
    persona: str

    @field_validator("match")
    @classmethod
    def _match_form(cls, value: str) -> str:
        if not _ROUTE.match(value):
            raise ValueError(
                f"{value!r} is not a route; use channel:chat:ID, channel:guild:ID, channel:team:ID, a channel name "
                "such as telegram, or default"
            )
        return value


class PluginConfig(Section):
    """A plugin to load, with what a failure of one of its guarding hooks means."""

    load: str
    on_error: Literal["block", "allow"] = "block"

    @model_validator(mode="before")
    @classmethod
    def _bare_name(cls, data: Any) -> Any:
        return {"load": data} if isinstance(data, str) else data

    @property
    def spec(self) -> tuple[str, Literal["block", "allow"]]:
        """What the plugin loader takes: the module or file, and `on_error`."""
        return self.load, self.on_error


class Config(Section):
    """The whole configuration file."""

    workspace: Path
    state_dir: Path
    timezone: str = "UTC"
    owners: list[str] = []
    roles: dict[str, Trust] = {}
    identities: dict[str, list[str]] = {}  # person -> accounts (channel:user_id): one role, budget and DM memory
    llm: LLMConfig = LLMConfig()
    agent: AgentConfig = AgentConfig()
    memory: MemoryConfig = MemoryConfig()
    channels: ChannelsConfig = ChannelsConfig()
    tools: ToolsConfig = ToolsConfig()
    access: AccessConfig = AccessConfig()
    approvals: ApprovalsConfig = ApprovalsConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    heartbeat: HeartbeatConfig = HeartbeatConfig()
    bus: BusConfig = BusConfig()
    shutdown_grace: Duration = 10.0
    mcp_servers: dict[str, MCPServerConfig] = {}
    budgets: BudgetsConfig = BudgetsConfig()
    personas: dict[str, PersonaConfig] = {}
    routes: list[RouteConfig] = []
    health: HealthConfig = HealthConfig()
    log_level: Literal["trace", "debug", "info", "warning", "error"] | None = None
    telemetry: TelemetryConfig = TelemetryConfig()
    retention: RetentionConfig = RetentionConfig()
    ops: OpsConfig = OpsConfig()
    voice: VoiceConfig = VoiceConfig()
    agents: list[AgentEntry] = []
    bindings: list[BindingConfig] = []
    triggers: list[TriggerConfig] = []

    @field_validator("roles")
    @classmethod
    def _role_refs(cls, value: dict[str, Trust]) -> dict[str, Trust]:
        for sender in value:
            if not (ACCOUNT.match(sender) or PERSON.match(sender)):
                raise ValueError(f"{sender!r} is not a sender; use channel:user_id such as discord:123, or a person")
        return value

    @field_validator("identities")
    @classmethod
    def _one_person_per_account(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        seen: dict[str, str] = {}
        for person, accounts in value.items():
            if not PERSON.match(person):
                raise ValueError(f"{person!r} is not a person's name; use letters, digits, _ . - (no ':')")
            for account in accounts:
                if not ACCOUNT.match(account):
                    raise ValueError(f"{account!r} (of {person}) is not an account; use channel:user_id")
                if account in seen:
                    raise ValueError(f"{account} belongs to both {seen[account]} and {person}")
                seen[account] = person
        return value

    @model_validator(mode="after")
    def _people_are_known(self) -> Config:
        """A bare name in owners, roles or budgets.senders must be a person of `identities`."""
        named = [("owners", n) for n in self.owners] + [("roles", n) for n in self.roles]
        named += [("budgets.senders", n) for n in self.budgets.senders]
        for key, name in named:
            if not ACCOUNT.match(name) and name not in self.identities:
                raise ConfigError(f"{name!r} is neither channel:user_id nor a person of identities", key)
        return self

    @model_validator(mode="after")
    def _memory_index_has_its_redis(self) -> Config:
        if self.memory.index == "redis" and self.bus.backend != "redis":
            raise ConfigError("redis keeps the index in the bus's Redis: needs bus.backend: redis", "memory.index")
        return self

    @model_validator(mode="after")
    def _routes_name_personas(self) -> Config:
        for index, route in enumerate(self.routes):
            if route.persona not in self.personas:
                known = ", ".join(sorted(self.personas)) or "none defined"
                raise ConfigError(f"unknown persona {route.persona!r} (personas: {known})", f"routes[{index}].persona")
        for key, persona in self.channels.group_personas():
            if persona not in self.personas:
                known = ", ".join(sorted(self.personas)) or "none defined"
                raise ConfigError(f"unknown persona {persona!r} (personas: {known})", key)
        return self

    @model_validator(mode="after")
    def _agents_and_bindings(self) -> Config:
        check_agents(self.agents, self.bindings, self.workspace)  # each agent's own sections: in the loader
        sections = self.channels.chat_sections()
        callers = {API_CLI_CALLER, *(token.name for token in self.channels.api.tokens)}
        check_reachable(self.bindings, [*sections, TRIGGER_CHANNEL], callers)
        for index, binding in enumerate(self.bindings):
            section = sections.get(binding.channel)
            if binding.account is not None and section is not None and binding.account not in section.bots():
                named = ", ".join(account.name for account in section.account_entries()) or "none"
                raise ConfigError(
                    f"no {binding.channel} account {binding.account!r} (channels.{binding.channel}.accounts: {named})",
                    f"bindings[{index}].account",
                )
        return self

    @model_validator(mode="after")
    def _triggers_named_once_to_known_agents(self) -> Config:
        names = {DEFAULT_AGENT, *(entry.name for entry in self.agents)}
        seen: set[str] = set()
        for index, trigger in enumerate(self.triggers):
            if trigger.name in seen:
                raise ConfigError(f"trigger name {trigger.name!r} is used twice", f"triggers[{index}].name")
            seen.add(trigger.name)
            if trigger.agent is not None and trigger.agent not in names:
                known = ", ".join(sorted(names))
                raise ConfigError(f"unknown agent {trigger.agent!r} (agents: {known})", f"triggers[{index}].agent")
        return self

    plugins: list[PluginConfig] = []
    _source: Path | None = PrivateAttr(None)

    @property
    def source(self) -> Path | None:
        """The file this config was read from (exec's sandbox hides it), when it came from one."""
        return self._source

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown timezone {value!r}; use an IANA name such as UTC or Europe/Berlin") from None
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _server_names(cls, value: dict[str, MCPServerConfig]) -> dict[str, MCPServerConfig]:
        for name in value:
            if not SERVER_NAME.match(name) or "__" in name:
                raise ValueError(f"{name!r} is not a server name; use up to 30 letters, digits, _ and - (no '__')")
        return value

    @field_validator("owners")
    @classmethod
    def _owner_refs(cls, value: list[str]) -> list[str]:
        for owner in value:
            if not (ACCOUNT.match(str(owner)) or PERSON.match(str(owner))):
                raise ValueError(f"{owner!r} is not an owner; use channel:user_id such as telegram:123, or a person")
        return [str(owner) for owner in value]

    def owner_accounts(self) -> set[str]:
        """Every account (`channel:user_id`) of an owner: those listed, and the accounts of owners named as people."""
        return {account for owner in self.owners for account in self.identities.get(owner, [owner])}

    def secrets(self) -> list[str]:
        """Every non-empty secret value in the config (tokens, keys)."""
        found: list[str] = []

        def walk(model: BaseModel) -> None:
            for name in type(model).model_fields:
                value = getattr(model, name)
                if isinstance(value, SecretStr) and value.get_secret_value():
                    found.append(value.get_secret_value())
                elif isinstance(value, BaseModel):
                    walk(value)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, BaseModel):
                            walk(item)

        walk(self)
        return found
