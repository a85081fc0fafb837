"""The recall tool: asks the memory index of the chat's own scope, with dates, and answers every query clearly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bot.bus import Trust
from bot.errors import ToolError
from bot.memory.index.recall import Recalled
from bot.tools.base import ToolContext
from bot.tools.recall import RecallTool
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import Harness

MARCH_5 = 1772668800.0  # 2026-03-05 00:00 UTC


class Memory:
    """A memory index that answers with fixed passages and keeps what it was asked."""

    def __init__(self, found: list[str], further: tuple[str, ...] = ()) -> None:
        self.found = Recalled(tuple(found), further)
        self.asked: list[tuple[Path, str, str, int | None, float | None, float | None]] = []

    def searchable(self, query: str) -> bool:
        return query not in ("", "what was it?")

    async def recall(
        self,
        directory: Path,
        query: str,
        session_key: str,
        shown_from: int | None,
        since: float | None,
        until: float | None,
    ) -> Recalled:
        self.asked.append((directory, query, session_key, shown_from, since, until))
        return self.found


async def test_the_best_passages_are_numbered_with_the_scope_session_and_prompt_window_passed_on(
    tmp_path: Path, ctx: ToolContext
) -> None:
    memory = Memory(["2026-03-05 (Thu), Ann: the wifi password is hunter2", "memory fact: likes tea"])
    text = await RecallTool(memory).run({"query": "wifi"}, replace(ctx, memory_dir=tmp_path, shown_from=40))
    assert text.splitlines() == [
        "Best matches in this chat's memory for 'wifi':",
        "1. 2026-03-05 (Thu), Ann: the wifi password is hunter2",
        "2. memory fact: likes tea",
    ]
    assert memory.asked == [(tmp_path, "wifi", "test:1", 40, None, None)]


async def test_further_hits_follow_the_numbered_ones_under_their_own_heading(tmp_path: Path, ctx: ToolContext) -> None:
    memory = Memory(["2026-03-05 (Thu), Ann: the wifi password is hunter2"], ("2026-03-09 (Mon), Ann: new router",))
    text = await RecallTool(memory).run({"query": "wifi"}, replace(ctx, memory_dir=tmp_path))
    assert text.splitlines()[1:] == [
        "1. 2026-03-05 (Thu), Ann: the wifi password is hunter2",
        "More mentions, further down the ranking:",
        "- 2026-03-09 (Mon), Ann: new router",
    ]


async def test_since_and_until_are_whole_days_in_the_timezone(tmp_path: Path, ctx: ToolContext) -> None:
    memory = Memory(["x"])
    args = {"query": "wifi", "since": "2026-03-05", "until": "2026-03-05"}
    await RecallTool(memory, "UTC").run(args, replace(ctx, memory_dir=tmp_path))
    assert memory.asked[0][4:] == (MARCH_5, MARCH_5 + 86400)
    with pytest.raises(ToolError, match="must be a date"):
        await RecallTool(memory).run({"query": "wifi", "since": "last week"}, replace(ctx, memory_dir=tmp_path))
    with pytest.raises(ToolError, match="after"):
        args = {"query": "wifi", "since": "2026-03-06", "until": "2026-03-05"}
        await RecallTool(memory).run(args, replace(ctx, memory_dir=tmp_path))


async def test_an_empty_or_stop_word_query_gets_a_clear_answer(tmp_path: Path, ctx: ToolContext) -> None:
    memory = Memory(["never shown"])
    for query in ("", "what was it?"):
        text = await RecallTool(memory).run({"query": query}, replace(ctx, memory_dir=tmp_path))
        assert "has no words to search for" in text
    assert memory.asked == []


async def test_nothing_found_says_so(tmp_path: Path, ctx: ToolContext) -> None:
    text = await RecallTool(Memory([])).run({"query": "zebra"}, replace(ctx, memory_dir=tmp_path))
    assert text.startswith("Nothing in this chat's memory matches 'zebra'.")


async def test_without_a_memory_scope_recall_refuses(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="no long-term memory"):
        await RecallTool(Memory([])).run({"query": "x"}, ctx)


async def test_a_guest_recalls_its_own_chat_history_and_never_another_chats(tmp_path: Path, fake_llm: FakeLLM) -> None:
    chats = tmp_path / "workspace" / "memory" / "chats"
    for folder, entry in [("telegram_2", "the blue bicycle"), ("telegram_3", "the red bicycle")]:
        (chats / folder).mkdir(parents=True)
        (chats / folder / "HISTORY.md").write_text(f"# History\n\n[2026-04-01 10:00] Talked about {entry}.\n")
    fake_llm.script(ToolCalls((("recall", {"query": "bicycle"}),)), Text("Blue."))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("which bicycle?", chat="telegram:2", sender="2", trust=Trust.GUEST) == "Blue."
    result = next(m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool")
    assert "2026-04-01 (Wed), conversation summary: Talked about the blue bicycle." in result
    assert "red bicycle" not in str(fake_llm.requests)
