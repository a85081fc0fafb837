"""`relaybot memory`: search a chat's memory as the recall tool does, and rebuild the search indexes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.cli.options import load

if TYPE_CHECKING:
    from bot.app.stores import Stores
    from bot.config.schema import Config
    from bot.memory.index.scopes import MemoryIndexes

app = typer.Typer(help="Search a chat's memory and rebuild the memory search indexes.", no_args_is_help=True)

CHAT_HELP = "A chat's session key, e.g. telegram:123 or telegram@work:123 (default: the owner's memory)."


def _scope(config: Config, stores: Stores, chat: str | None) -> Path:
    """The memory folder a chat's turns use: the scope whose list names it, else its group folder."""
    import re

    from bot.bus.messages import ChatRef
    from bot.memory.members import scope_of_session

    memory = config.workspace / "memory"
    if chat is None:
        return memory
    found = scope_of_session(stores.memory().members, chat)
    if found is not None:
        return config.workspace / found
    try:
        ref: ChatRef | None = ChatRef.parse(chat)
    except ValueError:
        ref = None
    folder = memory / "chats" / re.sub(r"[^\w@.-]", "_", f"{ref.channel_key}_{ref.chat_id}") if ref else None
    if folder is not None and folder.is_dir():
        return folder
    typer.echo(f"No memory lists chat {chat!r} yet: it is listed at its first turn with this version.", err=True)
    raise typer.Exit(1)


def _indexes(config: Config) -> tuple[MemoryIndexes, Stores]:
    """The indexes of this home (over the backend's session logs and lists, with `memory.embeddings`' vectors
    as the gateway has them), and the stores to close after."""
    from bot.app.backend import stores_for
    from bot.memory.index.scopes import MemoryIndexes
    from bot.memory.index.semantic import semantic_memory
    from bot.usage.budgets import BudgetGuard

    stores = stores_for(config)
    memory = stores.memory()
    folders = (config.workspace, config.state_dir)
    indexes = MemoryIndexes(memory.logs, memory.members, *folders, config.timezone, home=memory.home)
    if config.memory.embeddings is not None:
        ledger = stores.ledger()
        guard = BudgetGuard(config.budgets, ledger, config.timezone)
        indexes.semantic = semantic_memory(config.memory.embeddings, ledger, guard, memory.home)
    return indexes, stores


def _every_scope(config: Config, stores: Stores) -> list[Path]:
    """Every scope with a session list, or memory files under the workspace's memory folder."""
    memory = config.workspace / "memory"
    listed = {config.workspace / scope for scope in stores.memory().members.scopes()}
    files = {path.parent for name in ("MEMORY.md", "HISTORY.md") for path in memory.rglob(name)}
    return sorted(listed | files)


@app.command("search")
def memory_search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="What to look for, in words (a question works)."),
    chat: str | None = typer.Option(None, "--chat", help=CHAT_HELP),
    limit: int = typer.Option(5, "--limit", min=1, max=50, help="How many passages to show."),
) -> None:
    """Show the passages of a chat's memory that best match QUERY, as the recall tool finds them."""
    from bot.memory.index.recall import IndexRecall, Recalled
    from bot.tools.recall import FURTHER_HEADING

    config = load(ctx.obj)
    indexes, stores = _indexes(config)
    scope = _scope(config, stores, chat)
    recall = IndexRecall(indexes, config.timezone, limit)
    if not recall.searchable(query):
        typer.echo(f"{query!r} has no words to search for: only question and common words.", err=True)
        raise typer.Exit(1)

    async def run() -> Recalled:
        try:
            return await recall.recall(scope, query, chat or "", None, None, None)
        finally:
            await indexes.stop()
            await stores.aclose()

    found = asyncio.run(run())
    if not found.best:
        typer.echo(f"Nothing in {scope.relative_to(config.workspace)} matches {query!r}.")
    for n, text in enumerate(found.best, 1):
        typer.echo(f"{n}. {text}")
    if found.further:
        typer.echo(FURTHER_HEADING)
    for text in found.further:
        typer.echo(f"- {text}")


@app.command("reindex")
def memory_reindex(ctx: typer.Context, chat: str | None = typer.Option(None, "--chat", help=CHAT_HELP)) -> None:
    """Rebuild the search index of a chat's memory (every memory's without --chat) from the session logs."""
    config = load(ctx.obj)
    indexes, stores = _indexes(config)
    scopes = [_scope(config, stores, chat)] if chat else _every_scope(config, stores)

    async def run() -> list[tuple[Path, int]]:
        try:
            return [(scope, await indexes.reindex(scope)) for scope in scopes]
        finally:
            await indexes.stop()
            await stores.aclose()

    for scope, passages in asyncio.run(run()):
        typer.echo(f"{scope.relative_to(config.workspace)}: {passages} passages")
    if not scopes:
        typer.echo("No memory to index yet.")
