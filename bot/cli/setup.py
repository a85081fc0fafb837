"""`relaybot init` and `relaybot doctor`: create the home, then check everything the bot needs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from bot.cli.gateway_client import gateway_status
from bot.cli.options import Options, load

if TYPE_CHECKING:
    from bot.config.schema import Config
    from bot.setup.check import Check
    from bot.setup.doctor import ToolSchemas


def init(
    ctx: typer.Context,
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Ask nothing: copy the example config and the workspace, as scripts want."
    ),
) -> None:
    """Create the config and the workspace, asking for the model and channels on a terminal; add new config keys."""
    import sys

    from bot.config.loader import load_config
    from bot.config.paths import home_dir
    from bot.errors import ConfigError
    from bot.setup.home import InitReport, add_new_keys, init_config, init_workspace
    from bot.setup.init_wizard import next_step
    from bot.setup.webtoken import chat_url, write_api_token

    options: Options = ctx.obj
    report = InitReport()
    existed = options.config.exists()
    init_config(options.config, report)
    if existed:
        add_new_keys(options.config, report)
    elif not non_interactive and sys.stdin.isatty():
        _ask_for_settings(options.config)
    token = write_api_token(options.config) if options.config in report.created else None
    try:
        config = load_config(options.config)
    except ConfigError as exc:
        typer.echo(f"note: the config has a problem: {exc}", err=True)
        config = None
    workspace = config.workspace if config else home_dir() / "workspace"
    init_workspace(workspace, report)
    if config:
        config.state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for path in report.created:
        typer.echo(f"created {path}")
    for path in report.kept:
        typer.echo(f"kept    {path} (already there)")
    if token and config and config.channels.api.enabled:
        api = config.channels.api
        typer.echo(f"\nWeb chat: {chat_url(api.host, api.port)}")
        typer.echo(f"Paste this token into its login form (keep it secret; it is in {options.config}):\n  {token}")
    if report.added_keys:
        typer.echo(f"added to {options.config}, commented out with their defaults: {', '.join(report.added_keys)}")
    checks = None
    if config and not existed and not non_interactive and sys.stdin.isatty():
        typer.echo("\nChecking the setup (`relaybot doctor` runs these again):")
        checks = _run_checks(config)
        for check in checks:
            typer.echo(check.line())
    typer.echo(f"\n{next_step(options.config, checks, config.llm.api_base if config else None)}")


def _ask_for_settings(config_file: Path) -> None:
    """Ask for the model, its key or server, and the channels; write the answers into the new config."""
    from bot.setup.init_wizard import apply_settings, ask_settings
    from bot.storage.private_file import write_private
    from channels.platforms import KINDS

    def ask(question: str, default: str, hidden: bool) -> str:
        return str(typer.prompt(question, default=default, hide_input=hidden, show_default=bool(default))).strip()

    def confirm(question: str) -> bool:
        return typer.confirm(question, default=False)

    typer.echo(f"Setting up {config_file} (Enter keeps the default; every answer can be changed there later).")
    settings = ask_settings(ask, confirm, {name: kind.asks for name, kind in KINDS.items() if kind.asks})
    write_private(config_file, apply_settings(config_file.read_text(encoding="utf-8"), settings))


def doctor(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON.")) -> None:
    """Check the config, folders, model, channels, MCP servers, sandbox, gateway and disk; exit 1 on any ✗."""
    import json

    options: Options = ctx.obj
    checks = _config_check(options)
    if checks[0].status == "ok":
        checks += _run_checks(load(options))
    if as_json:
        typer.echo(json.dumps([check.as_dict() for check in checks], indent=2, ensure_ascii=False))
    else:
        for check in checks:
            typer.echo(check.line())
    if any(check.status == "fail" for check in checks):
        raise typer.Exit(1)


def _run_checks(config: Config) -> list[Check]:
    """Every check after the config loaded, with the tools the agent would offer its owner; then each further
    agent's own."""
    import asyncio

    from bot.config.agent_configs import agent_config, agent_names
    from bot.setup.doctor import check_agent, run_checks
    from channels.platforms import KINDS

    probes = {name: kind.probe for name, kind in KINDS.items() if kind.probe}

    async def every_agent() -> list[Check]:
        checks = await run_checks(config, gateway_status(config), _owner_tool_schemas(config), probes)
        for name in agent_names(config)[1:]:
            own = agent_config(config, name)
            checks += await check_agent(name, own, _owner_tool_schemas(own))
        return checks

    return asyncio.run(every_agent())


def _owner_tool_schemas(config: Config) -> ToolSchemas:
    """The owner's tool definitions, given the skills, as the agent builds its registry."""
    from bot.app.agent_parts import build_registry
    from bot.bus import Trust
    from bot.skills import SkillLibrary

    def schemas(skills: SkillLibrary) -> list[dict[str, Any]]:
        return build_registry(config, skills).definitions(Trust.OWNER)

    return schemas


def _config_check(options: Options) -> list[Check]:
    """The doctor's first line: whether the config file loads."""
    from bot.config.loader import load_config
    from bot.errors import ConfigError
    from bot.setup.check import Check

    try:
        load_config(options.config)
    except ConfigError as exc:
        return [Check("config", "fail", str(exc), "fix that key, or run `relaybot init` to create the file")]
    return [Check("config", "ok", f"{options.config} is valid")]
