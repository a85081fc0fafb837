"""`relaybot run` and `relaybot chat`: serve the channels, or talk to the agent in this terminal."""

from __future__ import annotations

import typer

from bot.cli.options import load


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
    import asyncio
    import contextlib

    from bot.app.serve import run_gateway
    from bot.errors import ConfigError

    try:
        with contextlib.suppress(KeyboardInterrupt):
            raise typer.Exit(asyncio.run(run_gateway(config, chosen)))
    except ConfigError as exc:
        typer.echo(f"config error: {exc}", err=True)
        raise typer.Exit(2) from None
