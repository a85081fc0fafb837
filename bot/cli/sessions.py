"""`relaybot sessions CHAT`: a chat's archived sessions; `--resume N` makes one live again through the gateway."""

from __future__ import annotations

import typer

from bot.cli.gateway_client import ask_gateway
from bot.cli.options import load


def sessions(
    ctx: typer.Context,
    chat: str = typer.Argument(..., help="The chat's session key, such as telegram:123 or api:me:default."),
    resume: int | None = typer.Option(None, "--resume", help="Make archived session N live again (gateway running)."),
) -> None:
    """List a chat's archived sessions, most recently active first, or resume one of them."""
    from zoneinfo import ZoneInfo

    from bot.agent.commands.session_switch import LISTED, archive_lines
    from bot.app.backend import stores_for
    from bot.bus import ChatRef

    config = load(ctx.obj)
    try:
        key = ChatRef.parse(chat).session_key
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="CHAT") from None
    if resume is None:
        archives = stores_for(config).sessions().archives(key)[:LISTED]
        for line in archive_lines(archives, ZoneInfo(config.timezone)) or [f"{key} has no archived sessions."]:
            typer.echo(line)
        return
    reply = ask_gateway(config, {"op": "sessions.resume", "chat": key, "number": resume})
    if reply is None:
        typer.echo("No gateway is running; start it with `relaybot run`, or send /resume N in the chat.", err=True)
        raise typer.Exit(1)
    if not reply.get("ok"):
        typer.echo(f"error: {reply.get('error')}", err=True)
        raise typer.Exit(1)
    typer.echo(f"Asked the gateway to resume session {resume} of {key}; the chat is told when it is live.")
