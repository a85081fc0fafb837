"""Semantic search end to end: the real gateway, litellm's direct path to the fake server's /v1/embeddings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.bus import Trust
from tests.fakes.openai_server import Error, FakeLLM, Reply, Text
from tests.memory.test_memory import is_consolidation, save
from tests.support.harness import Harness

HEADING = "[From earlier conversations"


def chat_requests(fake: FakeLLM) -> list[dict[str, Any]]:
    return [r for r in fake.requests if "save_memory" not in json.dumps(r.get("tools") or [])]


def recalled(request: dict[str, Any]) -> str:
    text = str(request["messages"][-1]["content"])
    return text.split("[end of recalled passages]")[0] if text.startswith(HEADING) else ""


async def chat(bot: Harness, *texts: str) -> None:
    """Say each text, with consolidation folding the older ones out of the prompt, then let embedding finish."""
    for text in texts:
        await bot.ask(text, chat="telegram:7", sender="7", trust=Trust.USER)
        await bot.app.memory.idle()
    assert bot.app.indexes.semantic is not None
    await bot.app.indexes.semantic.idle()


FILLERS = [f"Filler question number {n} about cooking pasta" for n in range(4)]


def answer(body: dict[str, Any]) -> Reply:
    """Consolidation saves a short entry; a chat gets a short reply (an echo would carry the time into vectors)."""
    return save("Chatted.", "") if is_consolidation(body) else Text("Noted.")


async def test_a_question_in_other_words_is_recalled_by_meaning_and_every_embedding_is_metered(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    fake_llm.same_words = {"ramble": "walk", "walked": "walk"}
    fake_llm.default = answer
    memory = {"embeddings": {"model": "embed", "api_base": fake_llm.base_url, "batch_size": 4}}
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 4}, memory=memory) as bot:
        await chat(bot, "We walked the Quiraing loop on Skye", *FILLERS)
        await chat(bot, "Any news on zebras?")  # its search indexes the chat; the vectors follow in the background
        unrelated = recalled(chat_requests(fake_llm)[-1])
        await bot.ask("Where did we ramble?", chat="telegram:7", sender="7", trust=Trust.USER)
        calls = bot.app.ledger.calls()
    assert unrelated == ""  # nothing is close enough (memory.embeddings.min_similarity)
    assert "We walked the Quiraing loop on Skye" in recalled(chat_requests(fake_llm)[-1])
    rows = {(call.purpose, call.sender) for call in calls if call.purpose == "embedding"}
    assert rows == {("embedding", None), ("embedding", "telegram:7")}  # passages in the background, the question
    assert all(call.prompt_tokens > 0 for call in calls if call.purpose == "embedding")


async def test_without_an_embedding_server_keywords_answer_alone(tmp_path: Path, fake_llm: FakeLLM) -> None:
    fake_llm.embedding_failure = Error(500, "no model loaded")
    fake_llm.default = answer
    memory = {"embeddings": {"model": "embed", "api_base": fake_llm.base_url}}
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 4}, memory=memory) as bot:
        await chat(bot, "My bicycle is a green Gazelle from 1988", *FILLERS)
        await bot.ask("What colour is my bicycle?", chat="telegram:7", sender="7", trust=Trust.USER)
    assert "green Gazelle" in recalled(chat_requests(fake_llm)[-1])
