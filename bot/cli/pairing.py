"""`relaybot pairing`: approve or revoke senders who asked to pair."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from bot.cli.options import load, load_agent

if TYPE_CHECKING:
    from bot.access.pairing import Pairing
    from bot.config.schema import Config

app = typer.Typer(help="Approve or revoke senders who asked to pair.", no_args_is_help=True)


AGENT = typer.Option(None, "--agent", help="The agent whose approvals these are (default: the default agent).")


def _pairing_book(ctx: typer.Context, agent: str | None = None) -> Pairing:
    """The pairing state the gateways use, of one agent (each keeps its own unless `pairing: shared`)."""
    from bot.app.backend import stores_for

    return stores_for(load_agent(ctx.obj, agent)).pairing()


@app.command("list")
def pairing_list(ctx: typer.Context, agent: str | None = AGENT) -> None:
    """Show pending pairing codes and approved senders."""
    import time

    book = _pairing_book(ctx, agent)
    pending = book.pending()
    if not pending:
        typer.echo("No pending pairing codes.")
    for entry in pending:
        age = int((time.time() - entry.created) / 60)
        typer.echo(f"{entry.channel:<9} {entry.code}  user {entry.user_id} ({entry.name or 'no name'}), {age} min ago")
    for channel, users in sorted(book.approved().items()):
        if users:
            typer.echo(f"approved on {channel}: {', '.join(users)}")
    for account, person in sorted(book.people().items()):
        typer.echo(f"{account} is {person}")


@app.command("approve")
def pairing_approve(
    ctx: typer.Context,
    channel_or_code: str = typer.Argument(..., metavar="[CHANNEL] CODE"),
    code: str | None = typer.Argument(None, show_default=False, metavar=""),
    person: str | None = typer.Option(
        None, "--as", help="Link the account to this person of `identities` (or one linked before)."
    ),
    agent: str | None = AGENT,
) -> None:
    """Approve the sender who holds CODE (on CHANNEL, or wherever it is pending, with whichever agent); takes effect
    without a restart."""
    config = load(ctx.obj)
    held_by = agent if agent is not None else _agent_holding(config, (code or channel_or_code).strip().upper())
    book = _pairing_book(ctx, held_by)
    if person is not None and person not in config.identities and person not in set(book.people().values()):
        known = ", ".join(sorted({*config.identities, *book.people().values()})) or "none yet"
        typer.echo(f"No person {person!r} (people: {known}); add them under identities: in the config.", err=True)
        raise typer.Exit(1)
    if code is None:
        code = channel_or_code
        pending = [entry.channel for entry in book.pending() if entry.code == code.strip().upper()]
        channel = pending[0] if pending else ""
    else:
        channel = channel_or_code
    user_id = book.approve(channel, code, person) if channel else None
    if user_id is None:
        where = f" on {channel}" if channel else ""
        typer.echo(f"No pending code {code.upper()}{where} (codes expire after an hour).", err=True)
        raise typer.Exit(1)
    by = f" for agent {held_by}" if held_by is not None else ""
    typer.echo(f"Approved {channel} user {user_id}{by}" + (f" as {person}." if person else "."))


def _agent_holding(config: Config, code: str) -> str | None:
    """The further agent with `code` pending (codes are random, so one at most); None: the default agent."""
    from bot.app.backend import stores_for
    from bot.config.agent_configs import agent_config, agent_names

    for name in agent_names(config)[1:]:
        if any(entry.code == code for entry in stores_for(agent_config(config, name)).pairing().pending()):
            return name
    return None


@app.command("revoke")
def pairing_revoke(ctx: typer.Context, channel: str, user_id: str, agent: str | None = AGENT) -> None:
    """Remove an approved sender."""
    if not _pairing_book(ctx, agent).revoke(channel, user_id):
        typer.echo(f"{channel} user {user_id} was not approved.", err=True)
        raise typer.Exit(1)
    typer.echo(f"Revoked {channel} user {user_id}.")
