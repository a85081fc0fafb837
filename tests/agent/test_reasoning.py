"""The model's reasoning is kept in the session beside the reply it led to, streamed or not, and never sent back."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.openai_server import FakeLLM, Text
from tests.support.harness import Harness


async def test_an_unstreamed_replys_reasoning_is_kept_and_not_sent_back(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("Forty-two.", reasoning="Six times seven."), Text("<think>Easy one.</think>Four."))
    async with Harness(tmp_path, fake_llm) as bot:
        assert await bot.ask("what is six times seven?") == "Forty-two."
        assert await bot.ask("and two plus two?") == "Four."
        replies = [m for m in bot.app.sessions.get("test:1").messages if m["role"] == "assistant"]
    assert [(m["content"], m.get("reasoning")) for m in replies] == [
        ("Forty-two.", "Six times seven."),
        ("Four.", "Easy one."),
    ]
    sent_back = fake_llm.requests[-1]["messages"]
    assert sent_back[2] == {"role": "assistant", "content": "Forty-two."}


async def test_a_streamed_replys_reasoning_is_kept_too(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("Streamed answer.", reasoning="Thinking while streaming."))
    async with Harness(tmp_path, fake_llm) as bot:
        await bot.reply_to(await bot.send("go", stream=True))
        final = bot.app.sessions.get("test:1").messages[-1]
    assert final == {"role": "assistant", "content": "Streamed answer.", "reasoning": "Thinking while streaming."}
