"""Consolidation on two workers sharing a workspace and Redis: one writer per scope, no chunk written twice."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from bot.agent.consolidation import MemoryConsolidator
from bot.bus import ChatRef
from bot.cluster.redis import RedisState
from bot.llm.types import LLMResponse, ToolCall
from bot.memory.files import MemoryScope
from bot.memory.locks import RedisScopeLocks
from bot.sessions.redis_store import RedisSessionStore
from tests.support.lock_attempts import lock_attempts, tried_since

CHAT = ChatRef("console", "me")

ENTRY = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d\] (.+)$", re.MULTILINE)


class GatedModel:
    """Answers each save_memory request once `gate` is set; keeps each request's excerpt."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.asked = asyncio.Event()
        self.excerpts: list[str] = []

    @property
    def requests(self) -> int:
        return len(self.excerpts)

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> LLMResponse:
        self.excerpts.append(messages[1]["content"].split("## Conversation excerpt")[1])
        self.asked.set()
        await self.gate.wait()
        arguments = {"history_entry": f"Summary {self.requests}.", "memory_update": f"# Memory\n- fact {self.requests}"}
        return LLMResponse("", (ToolCall("c1", "save_memory", arguments),))


class RoomyBudget:
    async def input_limit(self, tools: list[dict[str, Any]]) -> int:
        return 100_000


def worker(redis_url: str, workspace: Path, model: GatedModel) -> tuple[RedisSessionStore, MemoryConsolidator]:
    shared = RedisState(redis_url)
    store = RedisSessionStore(shared)
    locks = RedisScopeLocks(shared, workspace)
    return store, MemoryConsolidator(model, store, RoomyBudget(), 6, "UTC", locks=locks)  # type: ignore[arg-type]


async def test_two_workers_consolidating_one_session_write_each_chunk_once(redis_url: str, tmp_path: Path) -> None:
    model = GatedModel()
    store_a, memory_a = worker(redis_url, tmp_path, model)
    store_b, memory_b = worker(redis_url, tmp_path, model)
    scope = MemoryScope(tmp_path / "memory", is_main=True)
    session_a = store_a.get("console:me")
    for n in range(3):
        store_a.append(session_a, [{"role": "user", "content": f"q{n}"}, {"role": "assistant", "content": f"a{n}"}])
    memory_a.after_turn(session_a, scope, CHAT)  # A starts and waits on the model, holding the scope's lock
    await asyncio.wait_for(model.asked.wait(), 5)

    session_b = store_b.get("console:me")  # the next turn, on B, before A's consolidation ends
    store_b.append(session_b, [{"role": "user", "content": "q3"}, {"role": "assistant", "content": "a3"}])
    assert session_b.consolidated == 0
    server = RedisState(redis_url)  # the server's own count of SETs, which every lock attempt is
    tries = await lock_attempts(server)
    memory_b.after_turn(session_b, scope, CHAT)  # B wants the same chunk: it waits for A's lock
    await tried_since(server, tries)
    await server.aclose()
    assert model.requests == 1
    model.gate.set()
    await memory_a.idle()
    await memory_b.idle()

    first, second = model.excerpts  # A's chunk, then B's: the messages after it, never A's again
    assert "q0" in first and "q1" in first and "q2" not in first
    assert "q2" in second and "q0" not in second and "q1" not in second
    assert ENTRY.findall((tmp_path / "memory" / "HISTORY.md").read_text()) == ["Summary 1.", "Summary 2."]
    assert store_a.get("console:me").consolidated == session_b.consolidated == 6
