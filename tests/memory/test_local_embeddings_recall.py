"""The local embedding model end to end: the real gateway finds a paraphrase by meaning, with no server and no cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.bus import Trust
from bot.config.schema_embeddings import EmbeddingsConfig
from bot.errors import ConfigError
from bot.memory.index import semantic
from bot.setup.embeddings_check import check_embeddings
from tests.fakes.openai_server import FakeLLM
from tests.memory.test_semantic_recall import FILLERS, answer, chat_requests, recalled
from tests.support.harness import Harness

TOLD = "We have a dog and a cat at home"
ASKED = "What pets do I have?"  # no content word, form or synonym in common with it


async def recalled_for_the_paraphrase(tmp_path: Path, fake_llm: FakeLLM, memory: dict[str, object]) -> str:
    fake_llm.default = answer
    async with Harness(tmp_path, fake_llm, agent={"memory_window": 4}, memory=memory) as bot:
        for text in (TOLD, *FILLERS):  # consolidation folds the older ones out of the prompt
            await bot.ask(text, chat="telegram:7", sender="7", trust=Trust.USER)
            await bot.app.memory.idle()
        if bot.app.indexes.semantic is not None:
            await bot.app.indexes.semantic.idle()
        await bot.ask(ASKED, chat="telegram:7", sender="7", trust=Trust.USER)
        rows = [call for call in bot.app.ledger.calls() if call.purpose == "embedding"]
    assert rows == []  # the local model costs nothing: no ledger row, no budget
    return recalled(chat_requests(fake_llm)[-1])


async def test_a_paraphrase_keywords_miss_is_recalled_through_the_local_model(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    assert TOLD in await recalled_for_the_paraphrase(tmp_path / "local", fake_llm, {"embeddings": {"model": "local"}})
    fake_llm.requests.clear()
    assert TOLD not in await recalled_for_the_paraphrase(tmp_path / "keywords", fake_llm, {})


def test_the_local_model_without_its_packages_is_a_config_error_naming_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(semantic, "missing_packages", lambda: ["wordllama"])
    with pytest.raises(ConfigError, match=r"memory\.embeddings\.model: .*relaybot\[local-embeddings\]"):
        semantic.semantic_memory(EmbeddingsConfig(model="local"), ledger=None, guard=None)


async def test_doctor_shows_the_local_model_and_its_size() -> None:
    check = await check_embeddings(EmbeddingsConfig(model="local"))
    assert (check.status, check.detail) == ("ok", "local/wordllama-l2_supercat-256 answers (256 dimensions)")
