"""Typed configuration: YAML plus ${VAR} interpolation, validated at the edge."""

from __future__ import annotations

import difflib
import logging
import os
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from bot.bus import Trust
from bot.errors import ConfigError

logger = logging.getLogger(__name__)

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def parse_duration(value: Any) -> float:
    """Turn `30s`, `10m`, `1h`, `2d`, `250ms` or a number of seconds into seconds."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as 30s, 10m or 1h")
    if isinstance(value, int | float):
        return float(value)
    match = _DURATION.match(str(value))
    if not match:
        raise ValueError(f"{value!r} is not a duration; use a number with s, m or h, such as 30s, 10m or 1h")
    return float(match.group(1)) * _UNIT_SECONDS[match.group(2) or "s"]


Duration = Annotated[float, BeforeValidator(parse_duration)]


class Section(BaseModel):
    """Base of every config section: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class LLMConfig(Section):
    model: str = "openai/gpt-4o-mini"
    api_key: SecretStr = SecretStr("")
    api_base: str | None = None
    max_tokens: int = Field(4096, gt=0)
    temperature: float = Field(0.7, ge=0, le=2)
    context_window: int | None = Field(None, gt=0)
    timeout: Duration = 120.0
    fast_path: bool = True
    transcription_model: str | None = None
    transcription_api_base: str | None = None
    transcription_api_key: SecretStr = SecretStr("")
    fallbacks: list[str] = []


class AgentConfig(Section):
    max_iterations: int = Field(40, gt=0)
    max_concurrent_turns: int = Field(128, gt=0)
    queue_mode: Literal["collect", "followup", "steer"] = "collect"
    memory_window: int = Field(100, gt=1)
    max_subagents: int = Field(4, gt=0)
    session_cache_size: int = Field(500, gt=0)
    session_cache_mb: float = Field(32.0, gt=0)
    max_tool_result_chars: int = Field(16_000, ge=200)
    turn_timeout: Duration = Field(600.0, gt=0)
    max_inbound_chars: int = Field(32_000, gt=0)
    inline_attachment_chars: int = Field(20_000, ge=0)


DmPolicy = Literal["pairing", "allowlist", "open"]
GroupPolicy = Literal["mention", "open", "off"]


class ChannelSection(Section):
    enabled: bool = False
    allow_from: list[str] = []
    dm_policy: DmPolicy = "pairing"
    group_policy: GroupPolicy = "mention"
    send_concurrency: int = Field(8, gt=0)
    streaming: Literal["auto", "edit", "off"] = "auto"
    stream_interval: Duration = Field(1.0, gt=0)
    show_tool_progress: bool = True
    show_reasoning: bool = False

    @field_validator("allow_from", mode="before")
    @classmethod
    def _ids_as_strings(cls, value: Any) -> Any:
        return [str(item) for item in value] if isinstance(value, list) else value


class TelegramConfig(ChannelSection):
    token: SecretStr = SecretStr("")
    api_base: str = "https://api.telegram.org/bot"


class DiscordConfig(ChannelSection):
    token: SecretStr = SecretStr("")
    api_base: str = "https://discord.com/api/v10"
    gateway_url: str = "wss://gateway.discord.gg"


class SlackConfig(ChannelSection):
    bot_token: SecretStr = SecretStr("")
    app_token: SecretStr = SecretStr("")
    api_base: str = "https://slack.com/api/"
    reply_in_thread: bool = True


class ApiTokenConfig(Section):
    token: SecretStr
    name: str = Field("me", pattern=r"^[A-Za-z0-9_.-]{1,40}$")
    trust: Literal["owner", "admin", "user", "guest"] = "owner"


class ApiConfig(Section):
    enabled: bool = False
    host: str = "127.0.0.1"
    port: int = Field(18790, ge=0, le=65535)
    allow_remote: bool = False
    tokens: list[ApiTokenConfig] = []

    @field_validator("tokens")
    @classmethod
    def _unique_names(cls, value: list[ApiTokenConfig]) -> list[ApiTokenConfig]:
        names = [token.name for token in value]
        if len(set(names)) != len(names):
            raise ValueError("each API token needs its own name")
        return value

    def model_post_init(self, context: Any) -> None:
        if not self.allow_remote and not _is_loopback(self.host):
            raise ValueError(f"host {self.host!r} is not loopback; set allow_remote: true to serve other machines")


def _is_loopback(host: str) -> bool:
    """Whether a bind address only accepts local connections."""
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class ChannelsConfig(Section):
    telegram: TelegramConfig = TelegramConfig()
    discord: DiscordConfig = DiscordConfig()
    slack: SlackConfig = SlackConfig()
    api: ApiConfig = ApiConfig()


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ExecConfig(Section):
    enabled: bool = True
    timeout: Duration = 60.0
    sandbox: Literal["auto", "bwrap", "off"] = "auto"
    network: bool = True
    env: dict[str, str] = {}
    approval: Literal["off", "dangerous", "always"] = "dangerous"
    approval_timeout: Duration = Field(300.0, gt=0)

    @field_validator("env")
    @classmethod
    def _variable_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name; use letters, digits and _")
        return value


class WebSearchConfig(Section):
    api_key: SecretStr = SecretStr("")
    api_base: str = "https://api.search.brave.com/res/v1"


class WebFetchConfig(Section):
    allow_private: bool = False


GUEST_TOOLS = ["web_search", "web_fetch", "load_skill"]
USER_TOOLS = [*GUEST_TOOLS, "cron", "spawn", "send_file"]
ADMIN_TOOLS = [*USER_TOOLS, "read_file", "write_file", "edit_file", "list_dir"]


class ToolsByRole(Section):
    """The tools each role may call; owners may call every tool."""

    guest: list[str] = GUEST_TOOLS
    user: list[str] = USER_TOOLS
    admin: list[str] = ADMIN_TOOLS


class ToolsConfig(Section):
    restrict_to_workspace: bool = True
    protected_paths: list[str] = ["SOUL.md", "AGENTS.md", "USER.md", "TOOLS.md", "HEARTBEAT.md", "skills/"]
    by_role: ToolsByRole = ToolsByRole()
    exec: ExecConfig = ExecConfig()
    web_search: WebSearchConfig = WebSearchConfig()
    web_fetch: WebFetchConfig = WebFetchConfig()

    @model_validator(mode="before")
    @classmethod
    def _guest_tools_alias(cls, data: Any) -> Any:
        """`tools.guest_tools` is the old name of `tools.by_role.guest`."""
        if isinstance(data, dict) and "guest_tools" in data:
            data = dict(data)
            logger.warning("config: tools.guest_tools is deprecated; use tools.by_role.guest")
            by_role = dict(data.get("by_role") or {})
            by_role.setdefault("guest", data.pop("guest_tools"))
            data["by_role"] = by_role
        return data


_SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,30}$")


class MCPServerConfig(Section):
    """One MCP server: `command` (stdio) or `url` (streamable HTTP), who sees its tools, and the call timeout."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    trust: Literal["guest", "user", "admin", "owner"] = "owner"
    timeout: Duration = Field(60.0, gt=0)

    @field_validator("env")
    @classmethod
    def _variable_names(cls, value: dict[str, str]) -> dict[str, str]:
        return ExecConfig._variable_names(value)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not re.match(r"^https?://", value):
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value

    def model_post_init(self, context: Any) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (a streamable HTTP server)")


class AccessConfig(Section):
    max_pending: int = Field(10, gt=0)
    rate_limit: int = Field(20, ge=0)


class SchedulerConfig(Section):
    misfire_grace: Duration = 600.0


class BusConfig(Section):
    """Where inbound and outbound messages travel: the embedded journal, or Redis shared by several processes."""

    backend: Literal["local", "redis"] = "local"
    url: str | None = Field(None, validate_default=True)
    lease: Duration = Field(10.0, gt=0)
    claim_idle: Duration = Field(30.0, gt=0)
    prefix: str = Field("relaybot", pattern=r"^[A-Za-z0-9_.-]+$")

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

    daily_tokens: int | None = Field(None, ge=0)
    monthly_tokens: int | None = Field(None, ge=0)
    daily_usd: float | None = Field(None, ge=0)
    monthly_usd: float | None = Field(None, ge=0)


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
            if not re.match(r"^[a-z]+:\S+$", sender):
                raise ValueError(f"{sender!r} is not a sender; use channel:user_id such as telegram:42")
        return value


_ROUTE = re.compile(r"^(default|[a-z]+|[a-z]+:(chat|guild|team|server):[^:\s]+)$")


class PersonaConfig(Section):
    """A persona: its own model, system file (relative to the workspace), tools and sampling."""

    model: str | None = None
    api_base: str | None = None
    system: str | None = None
    tools: list[str] | None = None
    max_tokens: int | None = Field(None, gt=0)
    temperature: float | None = Field(None, ge=0, le=2)
    streaming: bool | None = None


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
    llm: LLMConfig = LLMConfig()
    agent: AgentConfig = AgentConfig()
    channels: ChannelsConfig = ChannelsConfig()
    tools: ToolsConfig = ToolsConfig()
    access: AccessConfig = AccessConfig()
    scheduler: SchedulerConfig = SchedulerConfig()
    heartbeat: HeartbeatConfig = HeartbeatConfig()
    bus: BusConfig = BusConfig()
    shutdown_grace: Duration = 10.0
    mcp_servers: dict[str, MCPServerConfig] = {}
    budgets: BudgetsConfig = BudgetsConfig()
    personas: dict[str, PersonaConfig] = {}
    routes: list[RouteConfig] = []

    @field_validator("roles")
    @classmethod
    def _role_refs(cls, value: dict[str, Trust]) -> dict[str, Trust]:
        for sender in value:
            if not re.match(r"^[a-z]+:\S+$", sender):
                raise ValueError(f"{sender!r} is not a sender; use channel:user_id such as discord:123")
        return value

    @model_validator(mode="after")
    def _routes_name_personas(self) -> Config:
        for index, route in enumerate(self.routes):
            if route.persona not in self.personas:
                known = ", ".join(sorted(self.personas)) or "none defined"
                raise ConfigError(f"unknown persona {route.persona!r} (personas: {known})", f"routes[{index}].persona")
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
            if not _SERVER_NAME.match(name) or "__" in name:
                raise ValueError(f"{name!r} is not a server name; use up to 30 letters, digits, _ and - (no '__')")
        return value

    @field_validator("owners")
    @classmethod
    def _owner_refs(cls, value: list[str]) -> list[str]:
        for owner in value:
            if not re.match(r"^[a-z]+:\S+$", str(owner)):
                raise ValueError(f"{owner!r} is not an owner; use channel:user_id such as telegram:123")
        return [str(owner) for owner in value]

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

        walk(self)
        return found


def home_dir() -> Path:
    """The relaybot home: $RELAYBOT_HOME, else ~/.relaybot."""
    return Path(os.environ.get("RELAYBOT_HOME") or "~/.relaybot").expanduser()


def config_path(explicit: Path | None = None) -> Path:
    """Where the config lives: --config, else $RELAYBOT_CONFIG, else <home>/config.yaml."""
    if explicit is not None:
        return explicit.expanduser()
    if env := os.environ.get("RELAYBOT_CONFIG"):
        return Path(env).expanduser()
    return home_dir() / "config.yaml"


def interpolate(value: Any, env: dict[str, str], key: str = "") -> Any:
    """Replace ${VAR} and ${VAR:-default} in every string of a parsed YAML tree."""
    if isinstance(value, dict):
        return {k: interpolate(v, env, f"{key}.{k}" if key else str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env, f"{key}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str) or "${" not in value:
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise ConfigError(f"environment variable {name} is not set (write ${{{name}:-}} to allow it to be empty)", key)

    return _ENV_REF.sub(substitute, value)


def load_config(path: Path, env: dict[str, str] | None = None) -> Config:
    """Read, interpolate and validate a config file; raise ConfigError naming the key."""
    import yaml

    if not path.exists():
        raise ConfigError(f"config file {path} not found; run `relaybot init` to create one")
    try:
        # libyaml's loader where PyYAML has it: a tenth of the pure-Python parser's time, on every start.
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{path}: YAML syntax error{where}: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the top level must be a mapping of keys")
    data = interpolate(raw, dict(os.environ) if env is None else env)
    base = path.parent
    for key, default in (("workspace", "workspace"), ("state_dir", "state")):
        given = data.get(key)
        data[key] = base / Path(given).expanduser() if given else home_dir() / default
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise _first_error(exc, data) from None
    config._source = path.resolve()
    return config


def _first_error(exc: ValidationError, data: dict[str, Any]) -> ConfigError:
    """One clear line for the first problem, naming the key path and what is allowed."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc)
    more = exc.error_count() - 1
    suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
    if error["type"] == "extra_forbidden":
        model = _model_at(Config, loc[:-1])
        allowed = sorted(model.model_fields) if model else []
        close = difflib.get_close_matches(loc[-1], allowed, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else f"; allowed keys: {', '.join(allowed)}"
        return ConfigError(f"unknown key{hint}{suffix}", key)
    message = error["msg"].removeprefix("Value error, ")
    return ConfigError(f"{message}{suffix}", key)


def _model_at(model: type[BaseModel], loc: list[str]) -> type[BaseModel] | None:
    """The section model found by following a key path from `model`."""
    for part in loc:
        field = model.model_fields.get(part)
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model
