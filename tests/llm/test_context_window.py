from typing import Any

import pytest

from bot.config.schema import LLMConfig
from bot.llm.context_window import ContextWindow, context_length_in
from tests.fakes.openai_server import FakeLLM


def config(**fields: Any) -> LLMConfig:
    return LLMConfig(model="openai/fake-model", **fields)


def unknown(model: str) -> dict[str, int]:
    raise ValueError(f"{model} is not mapped")


async def test_window_prefers_config_then_litellm_then_models_endpoint_then_default(fake_llm: FakeLLM) -> None:
    assert await ContextWindow(config(context_window=4000), model_info=unknown).size() == 4000
    known = ContextWindow(config(), model_info=lambda model: {"max_input_tokens": 128_000, "max_tokens": 16_384})
    assert await known.size() == 128_000
    assert await ContextWindow(config(api_base=fake_llm.base_url), model_info=unknown).size() == 8192
    fake_llm.context_length = 32_768
    assert await ContextWindow(config(api_base=fake_llm.base_url), model_info=unknown).size() == 32_768


async def test_window_is_cached_for_five_minutes() -> None:
    now, calls = 0.0, []

    def info(model: str) -> dict[str, int]:
        calls.append(model)
        return {"max_input_tokens": 1000 * len(calls)}

    window = ContextWindow(config(), clock=lambda: now, model_info=info)
    assert await window.size() == 1000
    now = 299.0
    assert await window.size() == 1000
    now = 301.0
    assert await window.size() == 2000 and len(calls) == 2


def test_models_listing_formats() -> None:
    assert context_length_in({"data": [{"id": "m", "max_model_len": 4096}]}, "openai/m") == 4096
    assert context_length_in({"data": [{"id": "a"}, {"id": "b", "context_length": 9}]}, "openai/a") is None
    assert context_length_in({"data": [{"id": "x", "meta": {"n_ctx_train": 2048}}]}, "openai/other") == 2048
    assert context_length_in({"error": "nope"}, "m") is None


async def test_the_models_endpoint_named_by_openai_base_url_is_asked_too(
    fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.context_length = 16_384
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.base_url)
    assert await ContextWindow(config(), model_info=unknown).size() == 16_384
    hosted = LLMConfig(model="anthropic/claude-x")
    assert await ContextWindow(hosted, model_info=unknown).size() == 8192  # the default: no server of ours to ask
