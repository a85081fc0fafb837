"""The root options every command reads, and loading the config with the command's logging."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import typer

if TYPE_CHECKING:
    from bot.config.schema import Config

GATEWAY_LOG = "relaybot.log"
CHAT_LOG = "chat.log"

LogMode = Literal["stderr", "gateway", "chat"]


@dataclass(frozen=True)
class Options:
    """`--config` (resolved) and `--log-level`, as the root callback parsed them."""

    config: Path
    log_level: str | None


def load(options: Options, mode: LogMode = "stderr") -> Config:
    """Load the config or exit 2 with one clear line; set up logging for the command's `mode`."""
    from bot.config.loader import load_config
    from bot.errors import ConfigError
    from bot.logs import log_dir, setup_logging

    try:
        config = load_config(options.config)
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
    level = options.log_level
    if mode == "gateway":
        level = level or config.log_level
        setup_logging(level or "info", config.secrets(), file=log_dir(config.state_dir) / GATEWAY_LOG)
    elif mode == "chat" and level is None:
        # The conversation owns the terminal: log lines go to a file instead.
        setup_logging("info", config.secrets(), file=log_dir(config.state_dir) / CHAT_LOG, stderr=False)
    else:
        setup_logging(level or "warning", config.secrets())
    return config


def load_agent(options: Options, name: str | None) -> Config:
    """The config of agent `name` (the default agent's when None), or exit 2 naming the agents there are."""
    from bot.config.agent_configs import agent_config, agent_names

    config = load(options)
    if name is None:
        return config
    if name not in agent_names(config):
        typer.echo(f"no agent {name!r}; agents: {', '.join(agent_names(config))}", err=True)
        raise typer.Exit(2)
    return agent_config(config, name)
