"""`relaybot approvals`: show and remove the commands and file changes an owner allowed always."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from bot.cli.options import load

if TYPE_CHECKING:
    from bot.plugins.allowlist import AllowList

app = typer.Typer(help="Show or remove what approvals allow always.", no_args_is_help=True)


def _allow_list(ctx: typer.Context) -> AllowList:
    """The allow list the gateways use."""
    from bot.app.backend import stores_for

    return stores_for(load(ctx.obj)).allow_list()


@app.command("list")
def approvals_list(ctx: typer.Context) -> None:
    """Show each allowed command or file change, numbered."""
    entries = _allow_list(ctx).entries()
    if not entries:
        typer.echo("Nothing is allowed always; every risky command asks.")
    for number, subject in enumerate(entries, 1):
        typer.echo(f"{number:>3}  {subject}")


@app.command("remove")
def approvals_remove(ctx: typer.Context, entry: str) -> None:
    """Ask again about ENTRY: its number from `approvals list`, or the exact command."""
    allowed = _allow_list(ctx)
    entries = allowed.entries()
    subject = entries[int(entry) - 1] if entry.isdigit() and 0 < int(entry) <= len(entries) else entry
    if not allowed.remove(subject):
        typer.echo(f"{entry!r} is not in the allow list (see `relaybot approvals list`).", err=True)
        raise typer.Exit(1)
    typer.echo(f"Removed; `{subject}` asks again.")
