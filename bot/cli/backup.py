"""`relaybot backup`: write, check and restore an archive of a relaybot home."""

from __future__ import annotations

from pathlib import Path

import typer

from bot.cli.options import load

app = typer.Typer(help="Back up a relaybot home, check an archive, restore one.", no_args_is_help=True)


def _default_target() -> Path:
    from datetime import UTC, datetime

    return Path(f"relaybot-backup-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}.tar.gz")


@app.command("create")
def backup_create(
    ctx: typer.Context,
    path: Path | None = typer.Argument(
        None, help="Where to write the archive (default: ./relaybot-backup-<time>.tar.gz)."
    ),
) -> None:
    """Archive the config, workspace and state (safe while the gateway runs; Redis keys on the redis bus)."""
    from bot.backup.home import create_backup
    from bot.errors import BackupError

    config = load(ctx.obj)
    target = path or _default_target()
    if target.exists():
        typer.echo(f"error: {target} exists; choose another path", err=True)
        raise typer.Exit(1)
    try:
        manifest = create_backup(config, target)
    except (BackupError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"Wrote {target} ({len(manifest.files)} files, {target.stat().st_size / 1024:.0f} KiB).")


@app.command("verify")
def backup_verify(path: Path = typer.Argument(..., help="The archive to check.")) -> None:
    """Check every file of an archive against its manifest."""
    from bot.backup.archive import verify_archive
    from bot.errors import BackupError

    try:
        manifest = verify_archive(path)
    except BackupError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"OK: {len(manifest.files)} files, relaybot {manifest.version}, made {manifest.created_at}.")


@app.command("restore")
def backup_restore(
    path: Path = typer.Argument(..., help="The archive to restore."),
    home: Path | None = typer.Option(None, "--home", help="An empty or new folder (default: $RELAYBOT_HOME)."),
) -> None:
    """Unpack an archive into an empty home (never over existing files); its Redis keys go back too."""
    from bot.backup.home import restore_backup
    from bot.config.paths import home_dir
    from bot.errors import BackupError

    target = (home or home_dir()).expanduser()
    try:
        restored = restore_backup(path, target)
    except (BackupError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    redis = f", {restored.redis_keys} Redis keys" if restored.redis_keys else ""
    typer.echo(f"Restored {len(restored.manifest.files)} files into {target}{redis}.")
    typer.echo(f"Run it with RELAYBOT_HOME={target} relaybot run")
