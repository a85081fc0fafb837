"""`relaybot slack-manifest`: the Slack app manifest, to paste at api.slack.com/apps."""

from __future__ import annotations

import typer


def slack_manifest(
    name: str = typer.Option("relaybot", "--name", help="The app's and bot user's name in Slack."),
    command: list[str] = typer.Option(
        [], "--command", help="A plugin's command as NAME or NAME=DESCRIPTION; repeat for several."
    ),
) -> None:
    """Print the Slack app manifest (YAML): scopes, events, slash commands, interactivity and Socket Mode."""
    import yaml

    from bot.app.command_menu import built_in_menu
    from bot.commands.catalogue import CommandSpec
    from channels.slack.manifest import slack_manifest as manifest

    extra = []
    for item in command:
        word, _, description = item.partition("=")
        word = word.strip().lstrip("/")
        if not word:
            raise typer.BadParameter(f"{item!r} names no command", param_hint="--command")
        extra.append(CommandSpec(word, description.strip() or f"The {word} command"))
    typer.echo(yaml.safe_dump(manifest(name, [*built_in_menu(), *extra]), sort_keys=False, allow_unicode=True))
