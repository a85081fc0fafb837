"""`relaybot manifest PLATFORM`: the app manifest a platform's KIND writes (Slack's), to paste in its console."""

from __future__ import annotations

import typer


def manifest(
    platform: str = typer.Argument(..., help="The platform whose app manifest to print, such as slack."),
    name: str = typer.Option("relaybot", "--name", help="The app's and bot user's name on the platform."),
    command: list[str] = typer.Option(
        [], "--command", help="A plugin's command as NAME or NAME=DESCRIPTION; repeat for several."
    ),
) -> None:
    """Print a platform's app manifest (YAML): for Slack its scopes, events, slash commands and Socket Mode."""
    import yaml

    from bot.app.command_menu import built_in_menu
    from bot.commands.catalogue import CommandSpec
    from channels.platforms import KINDS

    writers = {kind.name: kind.manifest for kind in KINDS.values() if kind.manifest is not None}
    write = writers.get(platform)
    if write is None:
        raise typer.BadParameter(f"{platform!r} has no app manifest; these do: {', '.join(writers)}")
    extra = []
    for item in command:
        word, _, description = item.partition("=")
        word = word.strip().lstrip("/")
        if not word:
            raise typer.BadParameter(f"{item!r} names no command", param_hint="--command")
        extra.append(CommandSpec(word, description.strip() or f"The {word} command"))
    typer.echo(yaml.safe_dump(write(name, [*built_in_menu(), *extra]), sort_keys=False, allow_unicode=True))
