"""Each agent's whole config: the top level's settings with the agent's own sections laid over them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from bot.config.schema import Config
from bot.config.schema_agents import DEFAULT_AGENT
from bot.errors import ConfigError


def agent_names(config: Config) -> list[str]:
    """Every agent of the gateway, the default one first."""
    return [DEFAULT_AGENT, *(entry.name for entry in config.agents)]


def agent_state_dir(config: Config, name: str) -> Path:
    """Where an agent keeps its state: the default agent where a single-agent gateway always has, others below."""
    return config.state_dir if name == DEFAULT_AGENT else config.state_dir / "agents" / name


def agent_config(config: Config, name: str) -> Config:
    """The config agent `name` runs with: its workspace, its state folder (and Redis prefix), its own sections
    over the top level's; no agents or bindings of its own. The default agent's is `config` itself."""
    if name == DEFAULT_AGENT:
        return config
    index, entry = next((i, e) for i, e in enumerate(config.agents) if e.name == name)
    data = config.model_dump()
    for key, value in entry.overrides().items():
        data[key] = _laid_over(data.get(key), value)
    data["workspace"] = entry.workspace_under(config.workspace)
    data["state_dir"] = agent_state_dir(config, name)
    data["bus"]["prefix"] = f"{config.bus.prefix}.{name}"
    data["agents"], data["bindings"] = [], []
    data["tools"].pop("ask_agent", None)  # a grant is the agent's own, never inherited; it names the gateway's agents
    asks = entry.tools.get("ask_agent", [])
    try:
        derived = Config.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        raise ConfigError(error["msg"], f"agents[{index}].{key}") from None
    except ConfigError as exc:
        raise ConfigError(str(exc), f"agents[{index}]") from None
    derived = derived.model_copy(update={"tools": derived.tools.model_copy(update={"ask_agent": list(asks)})})
    derived._source = config.source
    return derived


def check_agent_configs(config: Config) -> None:
    """Raise ConfigError naming the key when an agent's sections do not make a valid config, or when an agent may
    ask an agent that does not exist."""
    names = set(agent_names(config))
    for name in agent_names(config):
        derived = agent_config(config, name)
        unknown = sorted(set(derived.tools.ask_agent) - names)
        if unknown or name in derived.tools.ask_agent:
            index = agent_names(config).index(name) - 1
            key = "tools.ask_agent" if index < 0 else f"agents[{index}].tools.ask_agent"
            problem = f"unknown agent {unknown[0]!r}" if unknown else "an agent cannot ask itself"
            raise ConfigError(f"{problem} (agents: {', '.join(sorted(names))})", key)


def _laid_over(base: Any, over: Any) -> Any:
    """`over` laid over `base`: mappings merged key by key, anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{key: _laid_over(base.get(key), value) for key, value in over.items()}}
    return over
