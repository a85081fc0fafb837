"""`relaybot agents`: the gateway's agents, and which chats route to each."""

from __future__ import annotations

import typer

from bot.cli.options import load


def agents(
    ctx: typer.Context,
    chats: bool = typer.Option(True, "--chats/--no-chats", help="Also list each agent's chats (its sessions)."),
) -> None:
    """List the agents (model and server, workspace), the bindings most specific first, and each agent's chats."""
    from bot.agents.bindings import Bindings
    from bot.app.backend import stores_for
    from bot.config.agent_configs import agent_config, agent_names

    config = load(ctx.obj)
    for name in agent_names(config):
        own = agent_config(config, name)
        server = f" at {own.llm.api_base}" if own.llm.api_base else ""
        typer.echo(f"{name:<16} model {own.llm.model}{server}, workspace {own.workspace}")
        if chats:
            for summary in sorted(stores_for(own).sessions().summaries(0.0), key=lambda s: s["key"]):
                typer.echo(f"  {summary['key']} ({summary['messages']} messages)")
    bound = Bindings(config.bindings).agents_bound()
    typer.echo("")
    typer.echo("Bindings (most specific first):" if bound else "No bindings: every chat goes to main.")
    for index, binding in bound:
        typer.echo(f"  bindings[{index}] {binding.describe()} -> {binding.agent}")
    if bound:
        typer.echo("  anything else -> main")
