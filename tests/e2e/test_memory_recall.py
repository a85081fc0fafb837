"""Issue 35 end to end: `relaybot run` on Telegram and the fake model, a chat long enough for several
consolidations, then an early detail (in no summary) recalled unasked into the prompt and by the recall tool."""

from __future__ import annotations

import asyncio
import itertools
import re
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.fakes.telegram_server import FakeTelegram
from tests.memory.test_memory import is_consolidation, save
from tests.support.gateway import OWNER, TelegramBot
from tests.support.polling import until

ENTRY = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d\] (.+)$", re.MULTILINE)
FILLER = ["the weather", "a pasta recipe", "my running plan", "a birthday card", "the news", "a crossword clue"]


@pytest.mark.parametrize("backend", ["local", "redis"])
async def test_an_early_detail_is_recalled_unasked_and_by_the_tool_after_several_consolidations(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram, backend: str, request: pytest.FixtureRequest
) -> None:
    rounds = itertools.count(1)
    # a short reply, not an echo: an echo would copy each turn's recalled block into the chat
    fake_llm.default = lambda body: (
        save(f"Small talk, part {next(rounds)}.", "# Memory\n") if is_consolidation(body) else Text("Noted.")
    )
    bus = {"backend": "redis", "url": request.getfixturevalue("redis_url")} if backend == "redis" else {}
    options = {"streaming": "off"}
    async with TelegramBot(tmp_path, fake_llm, telegram, options, agent={"memory_window": 6}, bus=bus) as bot:
        await bot.gateway.manager.ready("telegram")
        telegram.text("My bike lock code is 8319 and the bike is a red Cannondale", chat_id=OWNER, user_id=OWNER)
        await telegram.wait_for_sent(1)
        for n in range(24):
            telegram.text(f"Tell me something about {FILLER[n % len(FILLER)]} (#{n})", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(n + 2)
            # Each consolidation done before the next turn: turns take milliseconds, a round's file writes wait
            # for a worker thread, and on a loaded machine one round outlasted all 24 turns (one entry, not 12).
            async with asyncio.timeout(60):
                await bot.gateway.agent.memory.idle()
        history = (bot.config.workspace / "memory" / "HISTORY.md").read_text()
        assert len(ENTRY.findall(history)) >= 3 and "8319" not in history  # only the exchange itself holds it

        fake_llm.script(ToolCalls((("recall", {"query": "bike lock code"}),)), Text("It is 8319."))
        telegram.text("What was the code for my bicycle lock?", chat_id=OWNER, user_id=OWNER)
        sent = await telegram.wait_for_sent(26)
    assert sent[-1]["text"] == "It is 8319."
    turn = [r for r in fake_llm.requests if not is_consolidation(r)][-2:]
    asked = turn[0]["messages"][-1]["content"]
    block, _, message = asked.partition("[end of recalled passages]")
    assert block.startswith("[From earlier conversations") and "My bike lock code is 8319" in block
    assert message.strip().endswith("What was the code for my bicycle lock?")
    assert "My bike lock code is 8319" not in str(turn[0]["messages"][1:-1])  # consolidated out of the history
    result = next(m["content"] for m in turn[1]["messages"] if m["role"] == "tool")
    assert re.search(r"^1\. \d{4}-\d\d-\d\d \(\w{3}\), \w.*: My bike lock code is 8319", result, re.MULTILINE)


async def test_what_a_consolidation_folds_is_indexed_before_the_next_message(
    tmp_path: Path, fake_llm: FakeLLM, telegram: FakeTelegram
) -> None:
    rounds = itertools.count(1)
    fake_llm.default = lambda body: (
        save(f"Small talk, part {next(rounds)}.", "# Memory\n") if is_consolidation(body) else Text("Noted.")
    )
    async with TelegramBot(tmp_path, fake_llm, telegram, {"streaming": "off"}, agent={"memory_window": 6}) as bot:
        await bot.gateway.manager.ready("telegram")
        history = bot.config.workspace / "memory" / "HISTORY.md"
        entries: list[str] = []
        for n in range(30):  # until a turn's consolidation folds a second chunk: no turn searches after it
            telegram.text(f"Tell me something about {FILLER[n % len(FILLER)]} (#{n})", chat_id=OWNER, user_id=OWNER)
            await telegram.wait_for_sent(n + 1)
            async with asyncio.timeout(60):
                await bot.gateway.agent.memory.idle()
            folded = ENTRY.findall(history.read_text()) if history.exists() else []
            if len(folded) > max(1, len(entries)):
                entries = folded
                break
            entries = folded
        else:
            raise AssertionError(f"30 turns folded {len(entries)} chunks")
        [path] = bot.config.state_dir.rglob("index.sqlite3")

        def indexed() -> list[str]:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as index:
                return [row[0] for row in index.execute("SELECT asked FROM passages WHERE kind = 'entry' ORDER BY id")]

        # no further message searches the index: what each fold left out of the prompt is indexed by itself
        await until(lambda: len(indexed()) == len(entries), 10)
    assert indexed() == entries
