"""`relaybot run`, `chat` and `reload`: serve the channels, talk to the agent here, re-read the running config."""

from __future__ import annotations

from typing import Any

import typer

from bot.cli.options import Options, load


def chat(
    ctx: typer.Context,
    message: str | None = typer.Option(None, "--message", "-m", help="Ask once, print the answer and exit."),
) -> None:
    """Chat with the bot in this terminal (logs go to state_dir/logs/chat.log unless --log-level is given)."""
    config = load(ctx.obj, "chat")
    import asyncio

    from bot.app.serve import run_console
    from bot.errors import ConfigError

    try:
        code = asyncio.run(run_console(config, message))
    except ConfigError as exc:  # found while composing, such as tools.exec.sandbox: bwrap without a usable bwrap
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


def run(
    ctx: typer.Context,
    role: str = typer.Option(
        "all", "--role", help="all (one process), gateway (channels and delivery) or worker (agent turns); redis bus."
    ),
) -> None:
    """Start the gateway: the agent and every enabled channel (logs also go to state_dir/logs/relaybot.log)."""
    from bot.cluster.roles import ROLES

    if role not in ROLES:
        raise typer.BadParameter(f"use one of {', '.join(ROLES)}", param_hint="--role")
    chosen = ROLES[ROLES.index(role)]
    config = load(ctx.obj, "gateway")
    import contextlib

    from bot.app.serve import run_gateway, run_loop
    from bot.errors import ConfigError

    try:
        with contextlib.suppress(KeyboardInterrupt):
            raise typer.Exit(run_loop(run_gateway(config, chosen)))
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None


def reload(ctx: typer.Context) -> None:
    """Re-read config.yaml in the running gateway (as SIGHUP does); exit 1 with the config error if it is invalid."""
    reply = _ask_reload(ctx.obj)
    if reply is None:
        typer.echo("No gateway is running; the next `relaybot run` reads the config.", err=True)
        raise typer.Exit(1)
    if not reply.get("ok"):
        typer.echo(f"config error: {reply.get('error')}; the gateway keeps its running config.", err=True)
        raise typer.Exit(1)
    applied = reply.get("applied") or []
    typer.echo(f"Applied from the next turn: {', '.join(applied)}." if applied else "No live setting changed.")
    for key in reply.get("restart_needed") or []:
        typer.echo(f"{key} changed; it takes effect after a restart.")


def _ask_reload(options: Options) -> dict[str, Any] | None:
    """Send `reload` to the gateway; an invalid file still reaches it at the default state folder, to be refused."""
    from bot.cli.gateway_client import CONTROL_TIMEOUT, unreachable
    from bot.config.loader import load_config
    from bot.config.paths import control_socket, home_dir
    from bot.errors import ConfigError, GatewayUnreachable
    from bot.ops.control import send_control

    try:
        socket = control_socket(load_config(options.config))
    except ConfigError as exc:
        socket = home_dir() / "state" / "control.sock"
        if not socket.exists():
            typer.echo(f"config error: {exc}", err=True)
            raise typer.Exit(2) from None
    try:
        return send_control(socket, {"op": "reload"}, CONTROL_TIMEOUT)
    except GatewayUnreachable as exc:
        raise unreachable(exc) from None
