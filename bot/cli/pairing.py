"""`relaybot pairing`: approve or revoke senders who asked to pair."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from bot.cli.options import load

if TYPE_CHECKING:
    from bot.access.pairing import Pairing

app = typer.Typer(help="Approve or revoke senders who asked to pair.", no_args_is_help=True)


def _pairing_book(ctx: typer.Context) -> Pairing:
    """The pairing state the gateways use."""
    from bot.app.backend import stores_for

    return stores_for(load(ctx.obj)).pairing()


@app.command("list")
def pairing_list(ctx: typer.Context) -> None:
    """Show pending pairing codes and approved senders."""
    import time

    book = _pairing_book(ctx)
    pending = book.pending()
    if not pending:
        typer.echo("No pending pairing codes.")
    for entry in pending:
        age = int((time.time() - entry.created) / 60)
        typer.echo(f"{entry.channel:<9} {entry.code}  user {entry.user_id} ({entry.name or 'no name'}), {age} min ago")
    for channel, users in sorted(book.approved().items()):
        if users:
            typer.echo(f"approved on {channel}: {', '.join(users)}")


@app.command("approve")
def pairing_approve(ctx: typer.Context, channel: str, code: str) -> None:
    """Approve the sender who holds CODE on CHANNEL (takes effect without a restart)."""
    user_id = _pairing_book(ctx).approve(channel, code)
    if user_id is None:
        typer.echo(f"No pending code {code.upper()} on {channel} (codes expire after an hour).", err=True)
        raise typer.Exit(1)
    typer.echo(f"Approved {channel} user {user_id}.")


@app.command("revoke")
def pairing_revoke(ctx: typer.Context, channel: str, user_id: str) -> None:
    """Remove an approved sender."""
    if not _pairing_book(ctx).revoke(channel, user_id):
        typer.echo(f"{channel} user {user_id} was not approved.", err=True)
        raise typer.Exit(1)
    typer.echo(f"Revoked {channel} user {user_id}.")
