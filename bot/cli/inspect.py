"""`relaybot status`, `logs`, `usage` and `plugins`: look at a bot without changing it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from bot.cli.gateway_client import ask_gateway
from bot.cli.options import GATEWAY_LOG, Options, load, load_agent

if TYPE_CHECKING:
    from bot.config.schema import Config
    from bot.config.schema_tools import MCPServerConfig
    from bot.usage.ledger import Totals


def status(ctx: typer.Context) -> None:
    """Show the config in use, the model, and each channel as the running gateway sees it."""
    config = load(ctx.obj)
    from bot.app.backend import stores_for
    from bot.app.channel_kinds import chat_bots
    from bot.ops.retention import state_sizes
    from bot.setup.gateway_status import describe_channel, describe_uptime
    from channels.platforms import KINDS

    options: Options = ctx.obj
    stores = stores_for(config).describe()
    typer.echo(f"config:    {options.config}")
    typer.echo(f"workspace: {config.workspace}")
    typer.echo(f"state:     {config.state_dir} ({stores.sessions})")
    typer.echo(f"sizes:     {state_sizes(config)}")
    typer.echo(f"model:     {config.llm.model}" + (f" at {config.llm.api_base}" if config.llm.api_base else ""))
    reply = ask_gateway(config, {"op": "status"})
    typer.echo(f"gateway:   {describe_uptime(reply)}")
    if reply and reply.get("context"):
        typer.echo(f"warning:   {reply['context']}")
    health = (reply or {}).get("channels") or {}
    bots = [bot.key for bot in chat_bots(config)]
    for platform in KINDS:
        for name in [key for key in bots if key.partition("@")[0] == platform] or [platform]:
            line = describe_channel(name in bots, health.get(name), reply is not None)
            typer.echo(f"{name + ':':<10} {line}")
    api = config.channels.api
    where = f" (web chat and API at http://{api.host}:{api.port}/)" if api.enabled else ""
    typer.echo(f"{'api:':<10} {describe_channel(api.enabled, health.get('api'), reply is not None)}{where}")
    for line in stores.delivery:
        typer.echo(line)
    typer.echo(f"exec:      {_exec_status(config)}")
    for name, server in config.mcp_servers.items():
        typer.echo(f"mcp {name}: {_mcp_status(server)}")


def _mcp_status(server: MCPServerConfig) -> str:
    """Connect once to an MCP server and report its tool count, or why it cannot be reached."""
    import asyncio

    from bot.tools.mcp.servers import describe

    return asyncio.run(describe(server))[1]


def _exec_status(config: Config) -> str:
    """Whether exec is off, sandboxed, or running on the host with only the guard rail (and why)."""
    from bot.errors import ConfigError
    from bot.tools.sandbox.launcher import exec_launcher

    if not config.tools.exec.enabled:
        return "disabled (tools.exec.enabled: false)"
    try:
        return exec_launcher(config).description
    except ConfigError as exc:
        return f"cannot start: {exc}"


def logs(
    ctx: typer.Context,
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing new lines until Ctrl-C."),
    lines: int = typer.Option(50, "--lines", "-n", help="How many of the last lines to show."),
) -> None:
    """Show the gateway's log file (state_dir/logs/relaybot.log)."""
    import contextlib

    from bot.logs import follow_lines, last_lines, log_dir

    path = log_dir(load(ctx.obj).state_dir) / GATEWAY_LOG
    if not path.exists():
        typer.echo(f"No log yet at {path}; `relaybot run` writes it.", err=True)
        raise typer.Exit(1)
    for line in last_lines(path, lines):
        typer.echo(line, nl=False)
    if follow:
        with contextlib.suppress(KeyboardInterrupt):
            for line in follow_lines(path):
                typer.echo(line, nl=False)


def plugins(ctx: typer.Context) -> None:
    """List the loaded plugins and what each registered."""
    from bot.app.agent_parts import plugins_for

    loaded = plugins_for(load(ctx.obj)).loaded
    if not loaded:
        typer.echo("No plugins loaded (add some under `plugins:` in the config).")
    for record in loaded:
        parts = [
            f"{label} {', '.join(prefix + name for name in dict.fromkeys(names))}"
            for label, prefix, names in (
                ("hooks", "", record.hooks),
                ("commands", "/", record.commands),
                ("tools", "", record.tools),
                ("channels", "", record.channels),
            )
            if names
        ]
        typer.echo(f"{record.plugin}: {'; '.join(parts) or 'nothing registered'}")


def usage(
    ctx: typer.Context,
    by: str = typer.Option("sender", "--by", help="Group by sender, chat, model, purpose or agent."),
    since: str | None = typer.Option(None, "--since", help="7d, 12h or 2026-11-01 (default: start of this month)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON array, one object per group."),
    chart: bool = typer.Option(False, "--chart", help="Also draw tokens per day as a bar chart."),
    agent: str | None = typer.Option(None, "--agent", help="One agent's ledger (default: the default agent's)."),
) -> None:
    """Tokens and cost of every model call, from the usage ledger (each agent keeps its own)."""
    import time
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from bot.app.backend import stores_for
    from bot.usage import report
    from bot.usage.ledger import GROUPS

    config = load_agent(ctx.obj, agent)
    if by not in (*GROUPS, "agent"):
        raise typer.BadParameter(f"use one of {', '.join(GROUPS)}, agent", param_hint="--by")
    zone = ZoneInfo(config.timezone)
    now = time.time()
    try:
        start = report.since_timestamp(since, now, zone)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--since") from None
    ledger = stores_for(config).ledger()
    try:
        groups = _by_agent(load(ctx.obj), start) if by == "agent" else ledger.grouped(by, start)
        if as_json:
            typer.echo(report.as_json(groups))
            return
        typer.echo(report.as_table(groups, by))
        if chart:
            offset = datetime.now(zone).utcoffset()
            days = ledger.daily(start, offset.total_seconds() if offset else 0.0)
            typer.echo("")
            typer.echo(report.as_chart(days))
    finally:
        ledger.close()


def _by_agent(config: Config, since: float) -> list[Totals]:
    """Each agent's sums since `since`, from its own ledger, biggest spender first."""
    from dataclasses import replace

    from bot.app.backend import stores_for
    from bot.config.agent_configs import agent_config, agent_names

    found = []
    for name in agent_names(config):
        ledger = stores_for(agent_config(config, name)).ledger()
        try:
            found.append(replace(ledger.totals(since), key=name))
        finally:
            ledger.close()
    return sorted(found, key=lambda totals: totals.tokens, reverse=True)
