import re
from dataclasses import replace
from pathlib import Path

import pytest

from bot.bus import Trust
from bot.errors import ToolError
from bot.tools.base import ToolContext
from bot.tools.recall import RecallTool
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.harness import Harness

HISTORY = """# History

[2026-03-01 09:15] Talked about the Lisbon trip; booked the hotel near Alfama.

[2026-03-04 18:02] Planned a birthday dinner for Mia; picked a Thai place.
"""


class Archive:
    def __init__(self, messages: dict[str, list[tuple[float, str, str]]]) -> None:
        self.messages = messages
        self.asked: list[str] = []

    def archived_messages(self, chat_key: str) -> list[tuple[float, str, str]]:
        self.asked.append(chat_key)
        return self.messages.get(chat_key, [])


@pytest.fixture
def scope(tmp_path: Path) -> Path:
    tmp_path.joinpath("HISTORY.md").write_text(HISTORY)
    return tmp_path


async def test_history_entries_are_found_with_their_dates(scope: Path, ctx: ToolContext) -> None:
    text = await RecallTool(None).run({"query": "lisbon hotel"}, replace(ctx, memory_dir=scope))
    assert (
        text.splitlines()[1] == "1. 2026-03-01 (history): Talked about the Lisbon trip; booked the hotel near Alfama."
    )
    assert "Mia" not in text


async def test_archived_sessions_of_this_chat_are_searched_as_exchanges(scope: Path, ctx: ToolContext) -> None:
    march_5 = 1772712000.0  # 2026-03-05 12:00 UTC
    archive = Archive({"test:1": [(march_5, "user", "what was the wifi password?"), (march_5, "assistant", "hunter2")]})
    text = await RecallTool(archive, "UTC").run({"query": "wifi"}, replace(ctx, memory_dir=scope))
    assert archive.asked == ["test:1"]
    assert "1. 2026-03-05 (earlier session): user: what was the wifi password?\nassistant: hunter2" in text


async def test_at_most_five_matches_best_first(tmp_path: Path, ctx: ToolContext) -> None:
    entries = [f"[2026-01-{n:02d} 10:00] tea with Sam, day {n}." for n in range(1, 10)]
    entries.append("[2026-02-01 10:00] tea tea tea: the great tea tasting.")
    tmp_path.joinpath("HISTORY.md").write_text("# History\n\n" + "\n\n".join(entries))
    text = await RecallTool(None).run({"query": "tea"}, replace(ctx, memory_dir=tmp_path))
    numbered = [line for line in text.splitlines() if re.match(r"\d\. ", line)]
    assert len(numbered) == 5 and numbered[0].startswith("1. 2026-02-01")


async def test_nothing_found_says_so(scope: Path, ctx: ToolContext) -> None:
    text = await RecallTool(None).run({"query": "zebra"}, replace(ctx, memory_dir=scope))
    assert text == "Nothing in this chat's history matches 'zebra'."


async def test_without_a_memory_scope_recall_refuses(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="no long-term memory"):
        await RecallTool(None).run({"query": "x"}, ctx)


async def test_a_guest_recalls_its_own_chat_history_and_never_another_chats(tmp_path: Path, fake_llm: FakeLLM) -> None:
    chats = tmp_path / "workspace" / "memory" / "chats"
    for folder, entry in [("telegram_2", "the blue bicycle"), ("telegram_3", "the red bicycle")]:
        (chats / folder).mkdir(parents=True)
        (chats / folder / "HISTORY.md").write_text(f"# History\n\n[2026-04-01 10:00] Talked about {entry}.\n")
    fake_llm.script(ToolCalls((("recall", {"query": "bicycle"}),)), Text("Blue."))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("which bike?", chat="telegram:2", sender="2", trust=Trust.GUEST) == "Blue."
    result = next(m["content"] for m in fake_llm.requests[1]["messages"] if m["role"] == "tool")
    assert "blue bicycle" in result and "red" not in result
