"""The `relaybot` command line: typer sub-apps per area, assembled in `bot.cli.main`."""
