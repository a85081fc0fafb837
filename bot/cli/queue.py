"""`relaybot queue`: the dead letters (messages and replies that failed for good), listed, retried or dropped.

With the local bus they are asked of the running gateway through its control socket, or read from the journal
when none runs (a retry then happens at the next start); with the redis bus, of Redis, which every process shares.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import typer

from bot.cli.gateway_client import ask_gateway
from bot.cli.options import load

if TYPE_CHECKING:
    from bot.bus.contract import DeadLetters
    from bot.config.schema import Config
    from bot.ops.dead_letters import AgentOf

app = typer.Typer(help="List, retry or drop the messages and replies that failed (dead letters).", no_args_is_help=True)

Operation = Callable[["DeadLetters", "AgentOf"], Awaitable[dict[str, Any]]]


def _agent_of(config: Config) -> AgentOf:
    from bot.agents.bindings import Bindings

    bindings = Bindings(config.bindings)
    return lambda chat: bindings.route(chat).agent


async def _on_the_bus(config: Config, operation: Operation) -> dict[str, Any]:
    """Run `operation` on the bot's dead letters directly: Redis, or the journal of a gateway that is not running."""
    from bot.app.backend import stores_for

    if config.bus.backend == "redis":
        bus = stores_for(config).bus()
        await bus.start()
        try:
            return await operation(bus.dead_letters, _agent_of(config))
        finally:
            await bus.stop()
    from bot.bus.journal import Journal
    from bot.bus.local import LocalDeadLetters
    from bot.config.paths import journal_path

    journal = Journal(journal_path(config))
    journal.open()
    try:
        return await operation(LocalDeadLetters(journal, asyncio.Queue(), asyncio.Queue()), _agent_of(config))
    finally:
        journal.close()


def _run(ctx: typer.Context, request: dict[str, Any], operation: Operation) -> dict[str, Any]:
    """The answer of the running gateway to `request`, or of `operation` on the bus when none runs (or on redis)."""
    config = load(ctx.obj)
    answer = None if config.bus.backend == "redis" else ask_gateway(config, request)
    if answer is None:
        answer = asyncio.run(_on_the_bus(config, operation))
        answer["next_start"] = config.bus.backend == "local"  # nothing runs what was put back until then
    if not answer.get("ok"):
        typer.echo(f"error: {answer.get('error')}", err=True)
        raise typer.Exit(1)
    return answer


@app.command("list")
def queue_list(
    ctx: typer.Context,
    chat: str | None = typer.Option(None, "--chat", help="Only this chat (its key, e.g. telegram:42)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON array, for scripts."),
) -> None:
    """Show every dead letter: id, direction, chat, agent, age, attempts, reason and its first words."""
    from bot.ops.dead_letters import describe_letters, list_letters

    async def operation(dead: DeadLetters, agent_of: AgentOf) -> dict[str, Any]:
        return {"ok": True, "letters": await list_letters(dead, agent_of, chat)}

    letters = _run(ctx, {"op": "queue.list", "chat": chat}, operation)["letters"]
    if as_json:
        typer.echo(json.dumps(letters, ensure_ascii=False, indent=2))
        return
    if not letters:
        typer.echo("No dead letters: every message was answered and every reply delivered.")
        return
    for line in describe_letters(letters, time.time()):
        typer.echo(line)


@app.command("retry")
def queue_retry(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(None, help="Ids from `relaybot queue list`."),
    every: bool = typer.Option(False, "--all", help="Every dead letter (of --chat, when given)."),
    chat: str | None = typer.Option(None, "--chat", help="With --all: only this chat's."),
) -> None:
    """Put dead letters back: a message runs its turn again, a reply is sent again (never written anew)."""
    from bot.ops.dead_letters import retry_letters

    if not ids and not every:
        typer.echo("error: name the dead letters to retry (ids from `relaybot queue list`) or give --all", err=True)
        raise typer.Exit(2)

    async def operation(dead: DeadLetters, agent_of: AgentOf) -> dict[str, Any]:
        return {"ok": True, "retried": await retry_letters(dead, ids or (), chat)}

    request = {"op": "queue.retry", "ids": ids or [], "all": every, "chat": chat}
    answer = _run(ctx, request, operation)
    retried, missing = answer["retried"], [i for i in ids or () if i not in answer["retried"]]
    when = "at the gateway's next start" if answer.get("next_start") else "now"
    typer.echo(f"Retried {len(retried)} dead letter{'' if len(retried) == 1 else 's'} ({when}).")
    if missing:
        typer.echo(f"Not dead letters (see `relaybot queue list`): {', '.join(missing)}", err=True)
        raise typer.Exit(1)


@app.command("drop")
def queue_drop(
    ctx: typer.Context,
    ids: list[str] = typer.Argument(None, help="Ids from `relaybot queue list`."),
    older_than: str | None = typer.Option(None, "--older-than", help="Every dead letter older than this (7d, 12h)."),
) -> None:
    """Forget dead letters for good, by id or by age."""
    from bot.config.durations import parse_duration
    from bot.ops.dead_letters import drop_letters

    if not ids and older_than is None:
        typer.echo("error: name the dead letters to drop or give --older-than", err=True)
        raise typer.Exit(2)
    try:
        age = parse_duration(older_than) if older_than is not None else None
    except ValueError as exc:
        typer.echo(f"error: --older-than: {exc}", err=True)
        raise typer.Exit(2) from None

    async def operation(dead: DeadLetters, agent_of: AgentOf) -> dict[str, Any]:
        return {"ok": True, "dropped": await drop_letters(dead, ids or (), age)}

    dropped = _run(ctx, {"op": "queue.drop", "ids": ids or [], "older_than": age}, operation)["dropped"]
    typer.echo(f"Dropped {dropped} dead letter{'' if dropped == 1 else 's'}.")
