"""Issue 46 end to end: semantic memory search through `relaybot run` (Telegram, the fake model and its embeddings, on
the redis bus) with the vectors in the SQLite index files and in Redis (`memory.index: redis`): a question in other
words recalls the same passage by meaning on both, and the Redis one keeps the vectors in Redis."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from bot.cluster.redis import RedisState
from tests.fakes.openai_server import FakeLLM, Reply, Text
from tests.fakes.telegram_server import FakeTelegram
from tests.memory.test_memory import is_consolidation, save
from tests.support.gateway import OWNER, TelegramBot

RECALLED = "[From earlier conversations"
WALK = "We walked the Quiraing loop on Skye"
FILLERS = [f"Filler question number {n} about cooking pasta" for n in range(4)]
SETTLE = 60.0  # a generous ceiling on the background work each turn leaves: past it the test fails, saying which


def answer(body: dict[str, Any]) -> Reply:
    """Consolidation saves a short entry; a chat gets a short reply (an echo would carry the time into vectors)."""
    return save("Chatted.", "") if is_consolidation(body) else Text("Noted.")


async def settled(work: Awaitable[None], what: str) -> None:
    """Await `work`; past SETTLE seconds fail naming `what` (never hang the run)."""
    try:
        async with asyncio.timeout(SETTLE):
            await work
    except TimeoutError:
        raise AssertionError(f"{what} did not finish within {SETTLE:g}s") from None


async def played(tmp_path: Path, url: str, prefix: str, index: str) -> list[str]:
    """On a fresh bot keeping its indexes in `index`, the passages auto-recalled for an unrelated question and for a
    question in other words, each turn's background embedding finished before the next."""
    async with FakeLLM() as fake_llm, FakeTelegram() as telegram:
        fake_llm.same_words = {"ramble": "walk", "walked": "walk"}
        fake_llm.default = answer
        bus = {"backend": "redis", "url": url, "prefix": prefix}
        memory = {"index": index, "embeddings": {"model": "embed", "api_base": fake_llm.base_url, "batch_size": 4}}
        options = {"streaming": "off"}
        async with TelegramBot(
            tmp_path, fake_llm, telegram, options, agent={"memory_window": 4}, bus=bus, memory=memory
        ) as bot:
            app = bot.gateway.agent
            semantic = app.indexes.semantic
            assert semantic is not None
            await settled(bot.gateway.manager.ready("telegram"), "telegram's start")
            for sent, text in enumerate([WALK, *FILLERS, "Any news on zebras?", "Where did we ramble?"], 1):
                telegram.text(text, chat_id=OWNER, user_id=OWNER)
                await telegram.wait_for_sent(sent, timeout=SETTLE)
                await settled(app.memory.idle(), f"consolidation after message {sent}")
                await settled(app.indexes.idle(), f"the index's catch-up after message {sent}")
                await settled(semantic.idle(), f"the background embedding after message {sent}")
        turns = [body["messages"][-1] for body in fake_llm.requests if not is_consolidation(body)]
        said = [str(message["content"]) for message in turns[-2:]]
        return [text.partition("[end of recalled passages]")[0] if text.startswith(RECALLED) else "" for text in said]


async def test_a_question_in_other_words_recalls_the_same_passage_with_the_vectors_in_redis(
    tmp_path: Path, redis_url: str
) -> None:
    on_files = await played(tmp_path / "sqlite", redis_url, "files", "sqlite")
    in_redis = await played(tmp_path / "redis", redis_url, "shared", "redis")

    assert in_redis == on_files
    unrelated, rambled = in_redis
    assert unrelated == ""  # nothing close enough (memory.embeddings.min_similarity)
    assert WALK in rambled  # no word shared: found by its vector alone
    shared = RedisState(redis_url, prefix="shared")
    vectors = shared.key("memory-index", "{memory}", "vec")
    assert shared.client.hlen(vectors) == shared.client.zcard(shared.key("memory-index", "{memory}", "ids")) > 0
    assert not any((tmp_path / "redis" / "state").rglob("index.sqlite3"))  # no file kept beside it
    shared.client.close()
