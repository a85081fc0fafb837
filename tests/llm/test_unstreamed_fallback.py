"""An endpoint that refuses to stream still answers: the call is made again unstreamed, and that is remembered."""

from collections.abc import AsyncIterator, Callable

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderError
from bot.llm.provider import ModelProvider
from bot.retry import RetryPolicy
from tests.fakes.openai_server import Error, FakeLLM, Text

MESSAGES = [{"role": "user", "content": "hello"}]
PATHS = pytest.mark.parametrize("fast_path", [True, False], ids=["fast", "litellm"])


@pytest.fixture
async def make(fake_llm: FakeLLM) -> AsyncIterator[Callable[[bool], ModelProvider]]:
    """Providers for the fake server, closed after the test."""
    made: list[ModelProvider] = []

    def provider(fast_path: bool) -> ModelProvider:
        config = LLMConfig(model="openai/gpt-4o-mini", api_key="sk-test", api_base=fake_llm.base_url)
        made.append(ModelProvider(config.model_copy(update={"fast_path": fast_path}), RetryPolicy(attempts=2)))
        return made[-1]

    yield provider
    for provider_made in made:
        await provider_made.aclose()


def streamed(fake: FakeLLM) -> list[bool]:
    """Which of the requests so far asked for a stream."""
    return [bool(body.get("stream")) for body in fake.requests]


@PATHS
async def test_a_refused_stream_is_answered_unstreamed_and_remembered(make, fake_llm: FakeLLM, fast_path: bool) -> None:
    fake_llm.refuse_streaming = 400
    provider = make(fast_path)
    shown: list[str] = []
    first = await provider.chat(MESSAGES, on_delta=shown.append)
    assert first.content == "echo: hello"
    assert shown == ["echo: hello"]  # at once, in one piece
    second = await provider.chat(MESSAGES, on_delta=shown.append)
    assert second.content == "echo: hello"
    assert streamed(fake_llm) == [True, False, False]
    assert "stream_options" not in fake_llm.requests[-1]


@PATHS
async def test_unprocessable_streams_are_answered_unstreamed_too(make, fake_llm: FakeLLM, fast_path: bool) -> None:
    fake_llm.refuse_streaming = 422
    provider = make(fast_path)
    shown: list[str] = []
    assert (await provider.chat(MESSAGES, on_delta=shown.append)).content == "echo: hello"
    assert shown == ["echo: hello"]
    await provider.chat(MESSAGES, on_delta=shown.append)
    # litellm itself asks once more after a 422 (dropping parameters the error names), then it is the same.
    assert streamed(fake_llm)[-3:] == [True, False, False]


@PATHS
async def test_a_request_refused_either_way_fails_and_streams_next_time(
    make, fake_llm: FakeLLM, fast_path: bool
) -> None:
    provider = make(fast_path)
    fake_llm.script(Error(400, "Invalid value for temperature"), Error(400, "Invalid value for temperature"))
    with pytest.raises(ProviderError):
        await provider.chat(MESSAGES, on_delta=lambda _: None)
    assert (await provider.chat(MESSAGES, on_delta=lambda _: None)).content == "echo: hello"
    assert streamed(fake_llm) == [True, False, True]


@PATHS
async def test_an_overflow_is_not_taken_for_a_refused_stream(make, fake_llm: FakeLLM, fast_path: bool) -> None:
    fake_llm.script(Error(400, "This model's maximum context length is 8192 tokens"))
    with pytest.raises(ProviderError):
        await make(fast_path).chat(MESSAGES, on_delta=lambda _: None)
    assert streamed(fake_llm) == [True]


@PATHS
async def test_each_provider_remembers_for_itself(make, fake_llm: FakeLLM, fast_path: bool) -> None:
    fake_llm.refuse_streaming = 400
    await make(fast_path).chat(MESSAGES, on_delta=lambda _: None)
    fake_llm.refuse_streaming = 0
    await make(fast_path).chat(MESSAGES, on_delta=lambda _: None)
    assert streamed(fake_llm) == [True, False, True]


async def test_a_refused_stream_costs_one_ledger_row_the_same_on_both_paths(make, fake_llm: FakeLLM, tmp_path) -> None:
    from bot.usage.ledger import UsageLedger
    from bot.usage.meter import MeteredProvider

    fake_llm.refuse_streaming = 400
    rows = []
    for fast_path in (True, False):
        ledger = UsageLedger(tmp_path / f"usage-{fast_path}.db")
        await MeteredProvider(make(fast_path), ledger).chat(MESSAGES, on_delta=lambda _: None)
        (row,) = ledger.calls()
        rows.append((row.model, row.prompt_tokens, row.completion_tokens, row.cost_usd, row.estimated, row.outcome))
        ledger.close()
    assert rows[0] == rows[1]
    assert rows[0][1:3] == (fake_llm.reported[-1]["prompt_tokens"], fake_llm.reported[-1]["completion_tokens"])


@PATHS
async def test_an_unstreamed_reply_cut_at_max_tokens_says_so(make, fake_llm: FakeLLM, fast_path: bool) -> None:
    from bot.llm.types import LENGTH_NOTE

    fake_llm.refuse_streaming = 400
    fake_llm.script(Text("The start of it", finish_reason="length"))
    shown: list[str] = []
    answer = await make(fast_path).chat(MESSAGES, on_delta=shown.append)
    assert "".join(shown) == answer.content == f"The start of it\n\n{LENGTH_NOTE}"
