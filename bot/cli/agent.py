"""`relaybot agent`: start a run in the running gateway; with --wait, wait for it and print its reply."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from bot.cli.gateway_client import ask_gateway
from bot.cli.options import load

if TYPE_CHECKING:
    from bot.config.schema import Config

WAIT_MS = 30_000
"""How long one `agent.wait` asks the gateway to wait; --wait asks again until the run ends."""


def agent(
    ctx: typer.Context,
    message: str = typer.Option(..., "--message", "-m", help="What to ask."),
    session: str = typer.Option("default", "--session", help="The session to run in: api:cli:<session>."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the run to end and print its reply."),
    as_json: bool = typer.Option(False, "--json", help="Print the gateway's answer as JSON."),
) -> None:
    """Ask the running gateway's agent, as the owner; prints the run id, or with --wait the reply."""
    config = load(ctx.obj)
    accepted = _ask(config, {"op": "agent", "message": message, "session": session})
    if not wait:
        typer.echo(json.dumps(accepted) if as_json else accepted["runId"])
        return
    request = {"op": "agent.wait", "runId": accepted["runId"], "timeoutMs": WAIT_MS}
    outcome = _ask(config, request)
    while outcome["status"] == "timeout":  # the run goes on; so does the waiting
        outcome = _ask(config, request)
    if as_json:
        typer.echo(json.dumps(outcome))
    elif outcome["status"] == "ok":
        typer.echo(outcome.get("reply") or "")
    if outcome["status"] != "ok":
        if not as_json:
            typer.echo(f"error: the run ended with {outcome.get('error')}", err=True)
        raise typer.Exit(1)


def _ask(config: Config, request: dict[str, Any]) -> dict[str, Any]:
    """One op on the control socket; exit 1 in one line when no gateway runs or it refuses."""
    reply = ask_gateway(config, request, WAIT_MS / 1000 + 10)
    if reply is None:
        typer.echo("No gateway is running; start it with `relaybot run`.", err=True)
        raise typer.Exit(1)
    if not reply.pop("ok", False):
        typer.echo(f"error: {reply.get('error')}", err=True)
        raise typer.Exit(1)
    return reply
