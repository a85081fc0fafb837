"""Embeddings through the real HTTP path and the real litellm, against the fake server's /v1/embeddings."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from bot.config.schema_embeddings import EmbeddingsConfig
from bot.errors import ProviderError
from bot.llm.embeddings import EmbeddingModel
from tests.fakes.embeddings import embed
from tests.fakes.openai_server import Error, FakeLLM


def close(actual: list[list[float]], expected: list[list[float]]) -> bool:
    return all(
        abs(a - e) < 1e-6 for row, want in zip(actual, expected, strict=True) for a, e in zip(row, want, strict=True)
    )


async def test_a_custom_server_gets_no_key_from_the_environment(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-shell-0123456789abcdef")
    model = EmbeddingModel(EmbeddingsConfig(model="nomic-embed-text", api_base=fake_llm.base_url))
    embedded = await model.embed(["the Quiraing trail", "a red bicycle"])
    assert close(embedded.vectors, [embed("the Quiraing trail"), embed("a red bicycle")])
    assert embedded.tokens == 6
    [headers] = fake_llm.embedding_headers
    assert "Authorization" not in headers
    assert fake_llm.embedding_requests[0]["model"] == "nomic-embed-text"


async def test_a_custom_server_gets_the_key_the_config_names(fake_llm: FakeLLM) -> None:
    config = EmbeddingsConfig(model="openai/embed-small", api_base=fake_llm.base_url, api_key=SecretStr("local-key"))
    await EmbeddingModel(config).embed(["hello"])
    assert fake_llm.embedding_headers[0]["Authorization"] == "Bearer local-key"
    assert fake_llm.embedding_requests[0]["model"] == "embed-small"


async def test_a_litellm_model_goes_through_litellm_with_its_own_host_and_key(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)  # where litellm sends openai/… models without api_base
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key")
    model = EmbeddingModel(EmbeddingsConfig(model="openai/text-embedding-3-small"))
    embedded = await model.embed(["green tea", "black coffee"])
    assert close(embedded.vectors, [embed("green tea"), embed("black coffee")])
    assert embedded.tokens == 4
    assert embedded.cost is not None and embedded.cost > 0
    assert fake_llm.embedding_headers[0]["Authorization"] == "Bearer sk-provider-key"


@pytest.mark.parametrize("direct", [True, False])
async def test_a_failing_server_is_one_provider_error(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch, direct: bool
) -> None:
    fake_llm.embedding_failure = Error(503, "overloaded")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-provider-key")
    base = fake_llm.base_url if direct else None
    model = EmbeddingModel(EmbeddingsConfig(model="openai/text-embedding-3-small", api_base=base, timeout=5))
    with pytest.raises(ProviderError, match="embedding with openai/text-embedding-3-small failed"):
        await model.embed(["hello"])
