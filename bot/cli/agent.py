"""`relaybot agent`: start a run in the running gateway; with --wait, or later with `agent wait RUN_ID`, wait
for it and print its reply."""

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


app = typer.Typer(
    help="Ask the running gateway's agent, as the owner (`-m`), or wait for a run (`wait RUN_ID`).",
    invoke_without_command=True,
)


@app.callback()
def agent(
    ctx: typer.Context,
    message: str | None = typer.Option(None, "--message", "-m", help="What to ask."),
    session: str = typer.Option("default", "--session", help="The session to run in: api:cli:<session>."),
    wait: bool = typer.Option(False, "--wait", help="Wait for the run to end and print its reply."),
    as_json: bool = typer.Option(False, "--json", help="Print the gateway's answer as JSON."),
) -> None:
    """Ask the running gateway's agent, as the owner; prints the run id (for `agent wait`), or with --wait the
    reply."""
    if ctx.invoked_subcommand is not None:
        return
    if message is None:
        typer.echo("error: say what to ask with -m, or wait for a run with `relaybot agent wait RUN_ID`", err=True)
        raise typer.Exit(2)
    config = load(ctx.obj)
    accepted = _ask(config, {"op": "agent", "message": message, "session": session})
    if not wait:
        typer.echo(json.dumps(accepted) if as_json else accepted["runId"])
        return
    _wait(config, accepted["runId"], as_json)


@app.command("wait")
def agent_wait(
    ctx: typer.Context,
    run_id: str = typer.Argument(..., help="The run id `relaybot agent -m …` printed."),
    as_json: bool = typer.Option(False, "--json", help="Print the run's outcome as JSON."),
) -> None:
    """Wait for a run started from the command line to end (without stopping it) and print its reply."""
    _wait(load(ctx.obj), run_id, as_json)


def _wait(config: Config, run_id: str, as_json: bool) -> None:
    """Wait for the run's end, asking again while the gateway says `timeout`; exit 1 when it failed."""
    request = {"op": "agent.wait", "runId": run_id, "timeoutMs": WAIT_MS}
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
