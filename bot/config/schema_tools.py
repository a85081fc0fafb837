"""The `tools` section (per-role sets, exec, web) and the MCP server entries."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from bot.config.durations import Duration
from bot.config.section import Section

logger = logging.getLogger(__name__)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class ExecConfig(Section):
    enabled: bool = True
    timeout: Duration = 60.0
    sandbox: Literal["auto", "bwrap", "off"] = "auto"
    network: bool = True
    env: dict[str, str] = {}
    approval: Literal["off", "dangerous", "always"] = "dangerous"
    approval_timeout: Duration = Field(default=300.0, gt=0)

    @field_validator("env")
    @classmethod
    def _variable_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name; use letters, digits and _")
        return value


class WebSearchConfig(Section):
    """Which search provider answers web_search; `auto`: the first configured one, else DuckDuckGo (no key)."""

    provider: Literal["auto", "brave", "tavily", "searxng", "duckduckgo"] = "auto"
    api_key: SecretStr = SecretStr("")  # Brave's under auto; the named provider's (Brave or Tavily) otherwise
    api_base: str = "https://api.search.brave.com/res/v1"
    tavily_api_key: SecretStr = SecretStr("")
    tavily_api_base: str = "https://api.tavily.com"
    searxng_url: str = ""
    duckduckgo_url: str = "https://html.duckduckgo.com/html/"
    timeout: Duration = Field(default=15.0, gt=0)

    @model_validator(mode="after")
    def _searxng_has_a_url(self) -> WebSearchConfig:
        if self.provider == "searxng" and not self.searxng_url:
            raise ValueError("provider searxng needs tools.web_search.searxng_url")
        return self


class ImageConfig(Section):
    """generate_image: off until `model` is set; base and key default to the llm section's."""

    model: str = ""
    api_base: str | None = None
    api_key: SecretStr = SecretStr("")
    size: str = "1024x1024"
    quality: str | None = None
    timeout: Duration = Field(default=120.0, gt=0)


class PythonSecondsConfig(Section):
    """run_python seconds each role may use a day (0: none, null: no limit); one ledger row per run."""

    guest: float | None = Field(default=0.0, ge=0)
    user: float | None = Field(default=900.0, ge=0)
    admin: float | None = Field(default=3600.0, ge=0)
    owner: float | None = Field(default=None, ge=0)


class PythonConfig(Section):
    """run_python: Python in the bubblewrap sandbox, never without it; the limits of one run."""

    enabled: bool = True
    timeout: Duration = Field(default=30.0, gt=0, le=3600)
    memory_mb: int = Field(default=512, ge=64)
    processes: int = Field(default=32, ge=1)
    disk_mb: int = Field(default=100, ge=1)
    daily_seconds: PythonSecondsConfig = PythonSecondsConfig()


class WebFetchConfig(Section):
    allow_private: bool = False


GUEST_TOOLS = ["web_search", "web_fetch", "load_skill"]
USER_TOOLS = [*GUEST_TOOLS, "cron", "spawn", "send_file", "run_python"]
ADMIN_TOOLS = [*USER_TOOLS, "read_file", "write_file", "edit_file", "list_dir", "generate_image"]


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
    python: PythonConfig = PythonConfig()
    web_search: WebSearchConfig = WebSearchConfig()
    web_fetch: WebFetchConfig = WebFetchConfig()
    ask_timeout: Duration = Field(default=600.0, gt=0)
    image: ImageConfig = ImageConfig()
    ask_agent: list[str] = []  # the other agents this one may ask a question (the ask_agent tool); none by default

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


SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,30}$")


class MCPServerConfig(Section):
    """One MCP server: `command` (stdio) or `url` (streamable HTTP), who sees its tools, and the call timeout."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: Path | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    trust: Literal["guest", "user", "admin", "owner"] = "owner"
    timeout: Duration = Field(default=60.0, gt=0)

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
