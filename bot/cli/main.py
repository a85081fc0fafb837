"""The `relaybot` command line: the root options and every command; heavy modules load inside the commands."""

from __future__ import annotations

from pathlib import Path

import typer

from bot.cli import (
    agent,
    agents,
    approvals,
    backup,
    cron,
    inspect,
    manifest,
    memory,
    pairing,
    queue,
    serve,
    sessions,
    setup,
    triggers,
)
from bot.cli.options import Options

app = typer.Typer(
    help=(
        "relaybot: a self-hosted AI assistant for Telegram, Discord, Slack, Matrix, WhatsApp, Signal, email, "
        "Mattermost, IRC, XMPP, Microsoft Teams, a web chat and the terminal."
    ),
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from bot import __version__

        typer.echo(f"relaybot {__version__}")
        raise typer.Exit()


@app.callback()
def options(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None,
        "--config",
        "-c",
        help="Config file (default: $RELAYBOT_CONFIG, else config.yaml in $RELAYBOT_HOME, which is ~/.relaybot "
        "unless set).",
    ),
    log_level: str | None = typer.Option(
        None, "--log-level", help="trace, debug, info, warning or error (trace also shows libraries' debug lines)."
    ),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Global options."""
    from bot.config.paths import config_path
    from bot.logs import LOG_LEVELS
    from bot.setup.filemodes import private_umask

    private_umask()  # whatever the command creates under the relaybot home is private
    if log_level is not None and log_level.lower() not in LOG_LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LOG_LEVELS)}", param_hint="--log-level")
    ctx.obj = Options(config_path(config), log_level.lower() if log_level else None)


for command in (
    setup.init,
    serve.chat,
    serve.run,
    serve.reload,
    agents.agents,
    sessions.sessions,
    inspect.status,
    setup.doctor,
    inspect.logs,
    inspect.plugins,
    inspect.usage,
):
    app.command()(command)
app.command()(manifest.manifest)
app.add_typer(pairing.app, name="pairing")
app.add_typer(cron.app, name="cron")
app.add_typer(backup.app, name="backup")
app.add_typer(approvals.app, name="approvals")
app.add_typer(memory.app, name="memory")
app.add_typer(queue.app, name="queue")
app.add_typer(agent.app, name="agent")
app.add_typer(triggers.app, name="triggers")


def main() -> None:
    """Console-script entry point."""
    app()
