"""The scope index with semantic search on, in SQLite files and in Redis: vectors fused with keywords, kept in step as
messages are saved."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.cluster.redis import RedisState
from bot.config.schema_embeddings import EmbeddingsConfig
from bot.llm.embeddings import EmbeddingModel
from bot.memory.index.protocols import IndexHome
from bot.memory.index.redis.store import RedisIndexes
from bot.memory.index.scopes import MemoryIndexes
from bot.memory.index.semantic import SemanticMemory
from bot.memory.members import FileMembers
from bot.sessions.logs import FileLogs
from bot.sessions.store import SessionStore
from bot.usage.ledger import UsageLedger
from bot.usage.metered_embeddings import MeteredEmbeddings
from tests.fakes.openai_server import Error, FakeLLM

HEADER = "[telegram DM 1 · from Ann (1) · 2026-03-02 10:00 Monday]\n"
SCOPE = Path("ws") / "memory"


def say(store: SessionStore, key: str, text: str, reply: str) -> None:
    session = store.get(key)
    store.append(session, [{"role": "user", "content": HEADER + text}, {"role": "assistant", "content": reply}])


def semantic_indexes(tmp_path: Path, fake: FakeLLM, home: IndexHome) -> tuple[SessionStore, MemoryIndexes]:
    """Indexes with semantic search, their passages and vectors kept in `home`."""
    store = SessionStore(tmp_path / "sessions")
    logs, members = FileLogs(tmp_path / "sessions"), FileMembers(tmp_path / "lists")
    indexes = MemoryIndexes(logs, members, tmp_path / "ws", tmp_path / "state", "UTC", home=home)
    model = EmbeddingModel(EmbeddingsConfig(model="embed", api_base=fake.base_url))
    embedder = MeteredEmbeddings(model, UsageLedger(tmp_path / "usage.db"))
    indexes.semantic = SemanticMemory(embedder, batch_size=16, home=home)
    return store, indexes


def asked(hits: list) -> list[str]:
    return [hit.stored.passage.asked for hit in hits]


async def test_a_question_in_other_words_finds_the_passage_through_its_vector(
    tmp_path: Path, fake_llm: FakeLLM, index_home: IndexHome
) -> None:
    fake_llm.same_words = {"hike": "walk", "hiked": "walk", "walked": "walk", "ramble": "walk"}
    store, indexes = semantic_indexes(tmp_path, fake_llm, index_home)
    scope = tmp_path / SCOPE
    say(store, "telegram:1", "We walked the Quiraing loop on Skye", "Lovely")
    say(store, "telegram:1", "The dentist is on Tuesday", "Noted")
    say(store, "telegram:1", "Hike plans: none this week, the weather is bad", "Shame")
    await indexes.join(scope, "telegram:1")
    assert indexes.semantic is not None
    await indexes.semantic.idle()

    found = asked(await indexes.search(scope, "where did we ramble?"))
    assert found[0] == "We walked the Quiraing loop on Skye"  # no shared word: found by meaning alone
    both = asked(await indexes.search(scope, "hike plans"))
    assert both[0] == "Hike plans: none this week, the weather is bad"  # keyword and vector agree
    assert "We walked the Quiraing loop on Skye" in both
    await indexes.stop()
    await indexes.semantic.stop()


async def test_a_failing_embedding_server_leaves_keyword_search_answering(
    tmp_path: Path, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture, index_home: IndexHome
) -> None:
    store, indexes = semantic_indexes(tmp_path, fake_llm, index_home)
    fake_llm.embedding_failure = Error(502, "bad gateway")
    scope = tmp_path / SCOPE
    say(store, "telegram:1", "The boat is named Seagull", "Nice")
    with caplog.at_level(logging.WARNING):
        await indexes.join(scope, "telegram:1")
        assert indexes.semantic is not None
        await indexes.semantic.idle()
        for _ in range(3):
            assert asked(await indexes.search(scope, "boat name")) == ["The boat is named Seagull"]
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1
    await indexes.stop()
    await indexes.semantic.stop()


async def test_processes_sharing_a_redis_index_embed_each_passage_once(
    tmp_path: Path, fake_llm: FakeLLM, redis_url: str
) -> None:
    fake_llm.same_words = {"walked": "walk", "ramble": "walk"}
    clients = [RedisState(redis_url, prefix="t") for _ in range(2)]
    (store, first), (_, second) = (semantic_indexes(tmp_path, fake_llm, RedisIndexes(shared)) for shared in clients)
    scope = tmp_path / SCOPE
    say(store, "telegram:1", "We walked the Quiraing loop on Skye", "Lovely")
    say(store, "telegram:1", "The dentist is on Tuesday", "Noted")
    await first.join(scope, "telegram:1")
    assert first.semantic is not None and second.semantic is not None
    await first.semantic.idle()
    embedded = sum(len(body["input"]) for body in fake_llm.embedding_requests)

    found = asked(await second.search(scope, "where did we ramble?"))  # the other process: nothing indexed by it
    await second.semantic.idle()
    assert found[0] == "We walked the Quiraing loop on Skye"
    assert embedded == 2 and [body["input"] for body in fake_llm.embedding_requests[1:]] == [["where did we ramble?"]]
    for indexes in (first, second):
        await indexes.stop()
    for shared in clients:
        shared.client.close()
