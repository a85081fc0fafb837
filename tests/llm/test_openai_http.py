"""The fast path against litellm: the same request body, the same parsed answer, errors on the same branches."""

from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderError, ProviderUnreachable
from bot.llm.prices import call_cost, model_record
from bot.llm.provider import ModelProvider, priced
from bot.llm.transports.openai_http import fast_path_for, openai_key, wire_body
from bot.llm.types import LLMResponse, Usage
from bot.retry import RetryPolicy
from tests.fakes.openai_server import Error, FakeLLM, Text, ToolCalls

MESSAGES = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "What is the weather in Zürich?"},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": "{}"}}],
    },
    {"role": "tool", "tool_call_id": "c1", "name": "web_search", "content": "sunny"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a thing up.",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
        },
    }
]


@pytest.fixture
async def pair(fake_llm: FakeLLM) -> AsyncIterator[tuple[ModelProvider, ModelProvider]]:
    """A fast-path provider and a litellm one, for the same model and endpoint."""
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake_llm.base_url, max_tokens=99)
    fast = ModelProvider(config, RetryPolicy(attempts=2, base_delay=0.0))
    slow = ModelProvider(config.model_copy(update={"fast_path": False}), RetryPolicy(attempts=2, base_delay=0.0))
    yield fast, slow
    await fast.aclose()


def same_ids(response: LLMResponse) -> LLMResponse:
    """The response with tool-call ids numbered by position (the fake numbers them globally)."""
    calls = tuple(replace(call, id=f"id{i}") for i, call in enumerate(response.tool_calls))
    return replace(response, tool_calls=calls)


def test_only_openai_models_take_the_fast_path() -> None:
    assert fast_path_for(LLMConfig(model="openai/gpt-4o-mini")) is not None
    assert fast_path_for(LLMConfig(model="openai/gpt-4o-mini", fast_path=False)) is None
    assert fast_path_for(LLMConfig(model="anthropic/claude-3-5-sonnet-latest")) is None


async def test_request_body_is_the_one_litellm_sends(pair, fake_llm: FakeLLM) -> None:
    fast, slow = pair
    await slow.chat(MESSAGES, TOOLS)
    await fast.chat(MESSAGES, TOOLS)
    await slow.chat(MESSAGES, TOOLS, on_delta=lambda _: None)
    await fast.chat(MESSAGES, TOOLS, on_delta=lambda _: None)
    litellm_plain, fast_plain, litellm_stream, fast_stream = fake_llm.requests
    assert fast_plain == litellm_plain
    assert fast_stream == litellm_stream
    assert fast_stream["stream"] is True and fast_plain["model"] == "fake-model"


@pytest.mark.parametrize("streamed", [False, True])
async def test_answers_with_tool_calls_read_the_same(pair, fake_llm: FakeLLM, streamed: bool) -> None:
    fast, slow = pair
    reply = ToolCalls((("lookup", {"query": "a long query split over chunks"}), ("lookup", '{"query": "b"')), "ok")
    fake_llm.script(reply, reply)
    deltas: dict[str, list[str]] = {"fast": [], "slow": []}
    kwargs = (lambda name: {"on_delta": deltas[name].append}) if streamed else (lambda name: {})
    from_litellm = await slow.chat(MESSAGES, TOOLS, **kwargs("slow"))
    from_fast = await fast.chat(MESSAGES, TOOLS, **kwargs("fast"))
    assert same_ids(from_fast) == same_ids(from_litellm)
    assert from_fast.tool_calls[0].arguments == {"query": "a long query split over chunks"}
    assert from_fast.finish_reason == "tool_calls"
    assert deltas["fast"] == deltas["slow"]


@pytest.mark.parametrize("streamed", [False, True])
async def test_text_and_usage_read_the_same(pair, fake_llm: FakeLLM, streamed: bool) -> None:
    fast, slow = pair
    fake_llm.script(Text("<think>plan</think>Hello there, friend."), Text("<think>plan</think>Hello there, friend."))
    kwargs = {"on_delta": lambda _: None} if streamed else {}
    from_litellm = await slow.chat(MESSAGES, **kwargs)
    from_fast = await fast.chat(MESSAGES, **kwargs)
    assert from_fast == from_litellm
    assert from_fast.content == "Hello there, friend." and from_fast.usage.prompt_tokens > 0


@pytest.mark.parametrize(
    "script",
    [
        [Error(401)],
        [Error(404)],
        [Error(400, "This model's maximum context length is 8192 tokens")],
        [Error(400, "Invalid value for temperature")],
        [Error(429), Text("later")],
        [Error(503), Error(503)],
    ],
    ids=["auth", "model", "overflow", "rejected", "rate-limited-then-ok", "unavailable"],
)
async def test_failures_end_the_same_way(pair, fake_llm: FakeLLM, script: list) -> None:
    async def outcome(provider: ModelProvider) -> object:
        fake_llm.script(*script)
        before = len(fake_llm.requests)
        try:
            answer: object = (await provider.chat(MESSAGES)).content
        except ProviderError as exc:
            answer = type(exc)
        return answer, len(fake_llm.requests) - before

    fast, slow = pair
    assert await outcome(fast) == await outcome(slow)


async def test_a_refused_connection_names_the_address() -> None:
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base="http://127.0.0.1:9/v1")
    provider = ModelProvider(config, RetryPolicy(attempts=2, base_delay=0.0))
    with pytest.raises(ProviderUnreachable) as info:
        await provider.chat(MESSAGES)
    await provider.aclose()
    assert info.value.address == "http://127.0.0.1:9"


def test_wire_body_drops_litellm_only_keys() -> None:
    request = {"model": "openai/x", "messages": [], "max_tokens": 5, "temperature": 0.1, "num_retries": 0}
    assert wire_body(request) == {"model": "x", "messages": [], "max_tokens": 5, "temperature": 0.1}


def test_cost_is_computed_from_usage_and_the_price_table() -> None:
    record = model_record("openai/gpt-4o-mini")
    assert record is not None and record.input_cost_per_token > 0
    expected = 1000 * record.input_cost_per_token + 100 * record.output_cost_per_token
    assert call_cost("openai/gpt-4o-mini", 1000, 100, 0) == pytest.approx(expected)
    assert call_cost("openai/fake-model", 1000, 100, 0) is None


def test_the_key_is_the_configs_else_openais_variable_on_openais_host_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert openai_key(LLMConfig(model="openai/gpt-4o-mini", api_key="sk-set")) == ("sk-set", [])
    assert openai_key(LLMConfig(model="openai/gpt-4o-mini")) == (None, ["OPENAI_API_KEY"])
    assert openai_key(LLMConfig(model="openai/local", api_base="http://127.0.0.1:1/v1")) == (None, [])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert openai_key(LLMConfig(model="openai/gpt-4o-mini")) == ("sk-env", [])
    assert openai_key(LLMConfig(model="openai/gpt-4o", api_base="https://api.openai.com/v1")) == ("sk-env", [])
    assert openai_key(LLMConfig(model="openai/local", api_base="http://127.0.0.1:1/v1")) == (None, [])


def test_a_priced_model_reports_the_cost_of_its_usage() -> None:
    response = priced(LLMResponse("hi", usage=Usage(1000, 100)), "openai/gpt-4o-mini")
    assert (
        response.usage.cost == pytest.approx(call_cost("openai/gpt-4o-mini", 1000, 100, 0)) and response.usage.cost > 0
    )
    assert priced(LLMResponse("hi", usage=Usage(1000, 100)), "openai/fake-model").usage.cost == 0.0
