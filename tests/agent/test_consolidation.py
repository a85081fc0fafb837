"""Consolidation tells who asked when a chunk of a session went into its scope's memory files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.agent.consolidation import MemoryConsolidator
from bot.bus import ChatRef
from bot.llm.types import LLMResponse, ToolCall
from bot.memory.files import MemoryScope
from bot.sessions.store import SessionStore

CHAT = ChatRef("console", "me")


class SavingModel:
    """Answers every consolidation with a history entry and a memory update."""

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        arguments = {"history_entry": "Small talk.", "memory_update": "# Memory\n- likes tea"}
        return LLMResponse("", (ToolCall("c1", "save_memory", arguments),))


class RoomyBudget:
    async def input_limit(self, tools: list[dict[str, Any]]) -> int:
        return 100_000


async def test_each_folded_chunk_is_told_with_its_session_and_scope_after_the_files_are_written(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path / "sessions")
    scope = MemoryScope(tmp_path / "memory", is_main=True)
    told: list[tuple[str, MemoryScope, str]] = []

    def folded(key: str, where: MemoryScope) -> None:
        told.append((key, where, (where.directory / "HISTORY.md").read_text()))

    memory = MemoryConsolidator(SavingModel(), store, RoomyBudget(), 6, "UTC", folded=folded)  # type: ignore[arg-type]
    session = store.get("console:me")
    for n in range(3):
        store.append(session, [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}])
    memory.after_turn(session, scope, CHAT)
    await memory.idle()

    [(key, where, history)] = told
    assert (key, where) == ("console:me", scope) and "Small talk." in history
    assert session.consolidated > 0
