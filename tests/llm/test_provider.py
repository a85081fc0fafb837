import asyncio
from collections.abc import AsyncIterator

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ModelNotFound, ProviderAuthError, ProviderUnavailable
from bot.llm.provider import ModelProvider
from bot.llm.reasoning import ThinkFilter, strip_think
from bot.llm.types import parse_arguments
from bot.retry import RetryPolicy
from tests.fakes.openai_server import Error, FakeLLM, Hang, Text, ToolCalls

USER = [{"role": "user", "content": "hi, how are you doing today?"}]


_made: list[ModelProvider] = []


@pytest.fixture(autouse=True)
async def close_providers() -> AsyncIterator[None]:
    """Close the pooled connections of every provider a test made."""
    yield
    while _made:
        await _made.pop().aclose()


def provider(fake: FakeLLM, **kwargs) -> ModelProvider:
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake.base_url, **kwargs)
    made = ModelProvider(config, RetryPolicy(attempts=4, base_delay=0.0))
    _made.append(made)
    return made


async def test_plain_reply(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("hello"))
    response = await provider(fake_llm).chat(USER)
    assert response.content == "hello"
    assert response.usage.prompt_tokens > 0


async def test_streaming_emits_deltas_and_assembles_tool_calls(fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("lookup", {"query": "a long query that is split"}),), content="let me check"))
    deltas: list[str] = []
    response = await provider(fake_llm).chat(USER, on_delta=deltas.append)
    assert "".join(deltas) == "let me check"
    assert response.tool_calls[0].name == "lookup"
    assert response.tool_calls[0].arguments == {"query": "a long query that is split"}


async def test_think_blocks_are_stripped_from_reply_and_stream(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("<think>secret plan</think>The answer."), Text("<think>hmm</think>Streamed."))
    assert (await provider(fake_llm).chat(USER)).content == "The answer."
    deltas: list[str] = []
    response = await provider(fake_llm).chat(USER, on_delta=deltas.append)
    assert response.content == "Streamed."
    assert "".join(deltas) == "Streamed."


def test_think_filter_handles_tags_split_across_chunks() -> None:
    out: list[str] = []
    visible = ThinkFilter(out.append)
    for chunk in ["Hi <th", "ink>hidden</thi", "nk> there <", "b>"]:
        visible.feed(chunk)
    assert "".join(out) == "Hi  there <b>"
    assert strip_think("<think>unfinished") == ""


def test_broken_json_arguments_are_repaired_or_reported() -> None:
    assert parse_arguments('{"path": "a.txt"') == ({"path": "a.txt"}, None)
    assert parse_arguments("") == ({}, None)
    assert parse_arguments("[1, 2]")[1] == "arguments must be a JSON object"


async def test_401_is_an_auth_error_without_retries(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(401))
    with pytest.raises(ProviderAuthError) as info:
        await provider(fake_llm).chat(USER)
    assert "llm.api_key" in info.value.user_message
    assert len(fake_llm.requests) == 1


async def test_404_is_model_not_found(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(404))
    with pytest.raises(ModelNotFound):
        await provider(fake_llm).chat(USER)


async def test_500_then_200_is_retried_once(fake_llm: FakeLLM) -> None:
    fake_llm.script(Error(500), Text("recovered"))
    assert (await provider(fake_llm).chat(USER)).content == "recovered"
    assert len(fake_llm.requests) == 2


async def test_429_is_retried_and_gives_up_after_the_attempts(fake_llm: FakeLLM) -> None:
    fake_llm.script(*[Error(429)] * 4)
    with pytest.raises(ProviderUnavailable):
        await provider(fake_llm).chat(USER)
    assert len(fake_llm.requests) == 4


async def test_timeout_is_enforced(fake_llm: FakeLLM) -> None:
    fake_llm.script(Hang(), Hang(), Hang(), Hang())
    started = asyncio.get_running_loop().time()
    with pytest.raises(ProviderUnavailable):
        await provider(fake_llm, timeout=0.2).chat(USER)
    assert asyncio.get_running_loop().time() - started < 5


async def test_only_standard_message_keys_reach_the_provider(fake_llm: FakeLLM) -> None:
    await provider(fake_llm).chat([{"role": "user", "content": "hi", "ts": 1, "extra": "x"}])
    assert fake_llm.requests[0]["messages"] == [{"role": "user", "content": "hi"}]
