"""Semantic memory over the real HTTP embeddings path: background batches (vectors in SQLite and in Redis), metered,
and a failing server."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config.schema import BudgetsConfig, Limit
from bot.config.schema_embeddings import EmbeddingsConfig
from bot.llm.embeddings import EmbeddingModel
from bot.memory.index.passages import Passage
from bot.memory.index.protocols import IndexHome, ScopeIndex
from bot.memory.index.query import parse_query
from bot.memory.index.semantic import FIRST_PAUSE, SemanticMemory
from bot.memory.index.store import FileIndexes
from bot.usage.budgets import BudgetGuard
from bot.usage.ledger import UsageLedger
from bot.usage.metered_embeddings import MeteredEmbeddings
from tests.fakes.openai_server import Error, FakeLLM

TRIPS = ["We walked the Quiraing trail on Skye", "Booked the dentist for Tuesday", "Bought a red bicycle"]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def index_of(tmp_path: Path, texts: list[str], home: IndexHome) -> ScopeIndex:
    index = home.open("memory", tmp_path / "index.sqlite3")
    index.add_entries([Passage("entry", 1.7e9 + i, "", text) for i, text in enumerate(texts)], "history", "", "1")
    return index


def semantic(
    fake: FakeLLM, ledger: UsageLedger, clock: Clock, home: IndexHome, guard: BudgetGuard | None = None
) -> SemanticMemory:
    model = EmbeddingModel(EmbeddingsConfig(model="embed", api_base=fake.base_url))
    return SemanticMemory(MeteredEmbeddings(model, ledger, guard), batch_size=2, clock=clock, home=home)


async def test_passages_are_embedded_in_background_batches_and_ranked_by_meaning(
    tmp_path: Path, fake_llm: FakeLLM, index_home: IndexHome
) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    index = index_of(tmp_path, TRIPS, index_home)
    memory = semantic(fake_llm, ledger, Clock(), index_home)
    memory.index_changed("memory", index.path)
    await memory.idle()
    assert [len(body["input"]) for body in fake_llm.embedding_requests] == [2, 1]
    ranker = await memory.ranker("which trail did we hike on the isle of Skye?", "memory", index.path)
    assert ranker is not None
    found = ranker(index, parse_query("trail Skye", datetime.now(UTC)), 2, None, None)
    assert index.passages(found)[found[0]].passage.asked == TRIPS[0]
    rows = [(c.purpose, c.sender) for c in ledger.calls()]
    assert rows == [("embedding", None)] * 3  # two background batches, then the question (no turn: no sender)
    await memory.stop()


async def test_a_failing_server_leaves_keywords_alone_with_one_warning_and_a_pause(
    tmp_path: Path, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    home = FileIndexes()
    index = index_of(tmp_path, TRIPS, home)
    clock = Clock()
    memory = semantic(fake_llm, ledger, clock, home)
    fake_llm.embedding_failure = Error(500, "the model crashed")
    with caplog.at_level(logging.INFO, logger="bot.memory.index.semantic"):
        memory.index_changed("memory", index.path)
        await memory.idle()
        assert await memory.ranker("trail", "memory", index.path) is None
        assert await memory.ranker("bicycle", "memory", index.path) is None
        assert len(fake_llm.embedding_requests) == 1  # paused after the first failure
        clock.now += FIRST_PAUSE + 1
        assert (
            await memory.ranker("trail", "memory", index.path) is None
        )  # tried again, failed again: no second warning
        fake_llm.embedding_failure = None
        clock.now += 4 * FIRST_PAUSE
        assert await memory.ranker("trail", "memory", index.path) is not None
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    [warning] = [m for level, m in messages if level == "WARNING"]
    assert "keywords alone" in warning and "the model crashed" in warning
    assert [m for level, m in messages if level == "INFO"] == [
        "the embedding server answers again; memory search uses vectors again"
    ]
    await memory.stop()


async def test_background_embedding_waits_for_the_background_budget(tmp_path: Path, fake_llm: FakeLLM) -> None:
    ledger = UsageLedger(tmp_path / "usage.db")
    guard = BudgetGuard(BudgetsConfig(background=Limit(daily_tokens=0)), ledger, "UTC")
    home = FileIndexes()
    index = index_of(tmp_path, TRIPS, home)
    memory = semantic(fake_llm, ledger, Clock(), home, guard)
    memory.index_changed("memory", index.path)
    await memory.idle()
    assert fake_llm.embedding_requests == [] and ledger.calls() == []
    await memory.stop()
