"""A model stream that never lies: slow, cut, broken and length-capped streams against the fake server."""

import logging
from typing import Any

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderUnavailable, StreamBroken
from bot.llm.provider import ModelProvider
from bot.llm.types import CUT_NOTE, LENGTH_NOTE, LLMResponse
from bot.retry import RetryPolicy
from tests.fakes.openai_server import FakeLLM, Text, ToolCalls
from tests.support.harness import RecordedSleep

USER = [{"role": "user", "content": "hi"}]


def provider(fake: FakeLLM, **llm: Any) -> ModelProvider:
    config = LLMConfig(**{"model": "openai/fake-model", "api_key": "sk-test", "api_base": fake.base_url, **llm})
    return ModelProvider(config, RetryPolicy(attempts=3, sleep=RecordedSleep()))


@pytest.fixture
async def warm_llm(fake_llm: FakeLLM) -> FakeLLM:
    """The fake, after one streamed call: litellm's first stream imports modules for a second and more,
    blocking the loop, which would count against the sub-second timeouts these tests use."""
    fake_llm.script(Text("warm"))
    await stream(fake_llm)
    fake_llm.requests.clear()
    return fake_llm


async def stream(fake: FakeLLM, **llm: Any) -> tuple[LLMResponse, str]:
    deltas: list[str] = []
    response = await provider(fake, **llm).chat(USER, on_delta=deltas.append)
    return response, "".join(deltas)


async def test_a_slow_healthy_stream_is_not_cut_by_the_timeout(warm_llm: FakeLLM) -> None:
    fake_llm = warm_llm
    text = "".join(f"word{i:03} " for i in range(10))  # ten chunks, 60 ms apart: 0.6 s in all
    fake_llm.script(Text(text, chunk_delay=0.06))
    response, shown = await stream(fake_llm, timeout=0.25)
    assert response.content == shown == text
    assert len(fake_llm.requests) == 1


async def test_a_stream_that_goes_silent_before_any_text_is_retried(warm_llm: FakeLLM) -> None:
    fake_llm = warm_llm
    fake_llm.script(Text("never seen", cut_after=0, cut="stall"), Text("second try"))
    response, shown = await stream(fake_llm, timeout=0.2)
    assert response.content == shown == "second try"
    assert len(fake_llm.requests) == 2


async def test_a_stream_that_goes_silent_midway_is_reported_as_broken(
    warm_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm = warm_llm
    fake_llm.script(Text("half of the answer", cut_after=2, cut="stall"))
    deltas: list[str] = []
    with caplog.at_level(logging.WARNING), pytest.raises(StreamBroken) as info:
        await provider(fake_llm, timeout=0.2).chat(USER, on_delta=deltas.append)
    assert "".join(deltas) == "half of the answ"
    assert "incomplete" in info.value.user_message
    assert len(fake_llm.requests) == 1
    assert any(
        r.levelno == logging.WARNING and "broke after part of the reply" in r.getMessage() for r in caplog.records
    )


async def test_a_dropped_connection_after_text_is_reported_as_broken(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("half of the answer", cut_after=2, cut="drop"), Text("never asked"))
    with pytest.raises(StreamBroken):
        await stream(fake_llm)
    assert len(fake_llm.requests) == 1


async def test_a_stream_cut_after_text_keeps_it_and_says_so(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("the first part and the rest", cut_after=2))
    response, shown = await stream(fake_llm)
    assert response.content == shown == f"the first part a\n\n{CUT_NOTE}"
    assert response.finish_reason == "cut" and response.incomplete
    assert len(fake_llm.requests) == 1


async def test_a_stream_cut_before_any_text_is_retried(fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("lookup", '{"query": "half'),), cut_after=1), Text("whole answer"))
    response, shown = await stream(fake_llm)
    assert response.content == shown == "whole answer" and not response.incomplete
    assert len(fake_llm.requests) == 2


async def test_streams_cut_every_time_give_up_after_the_attempts(fake_llm: FakeLLM) -> None:
    fake_llm.script(*[Text("x", cut_after=0)] * 3)
    with pytest.raises(ProviderUnavailable):
        await stream(fake_llm)
    assert len(fake_llm.requests) == 3


@pytest.mark.parametrize("streamed", [True, False])
async def test_a_reply_cut_at_max_tokens_says_so(fake_llm: FakeLLM, streamed: bool) -> None:
    fake_llm.script(Text("a long story that goes on", finish_reason="length"))
    if streamed:
        response, shown = await stream(fake_llm)
        assert shown == response.content
    else:
        response = await provider(fake_llm).chat(USER)
    assert response.content == f"a long story that goes on\n\n{LENGTH_NOTE}"
    assert response.finish_reason == "length" and response.incomplete


async def test_tool_calls_cut_at_max_tokens_are_marked_unusable(fake_llm: FakeLLM) -> None:
    fake_llm.script(ToolCalls((("write_file", '{"path": "a.txt", "content": "half a fi'),), finish_reason="length"))
    response, shown = await stream(fake_llm)
    [call] = response.tool_calls
    assert call.arguments_error and "max_tokens" in call.arguments_error
    assert response.content == shown == ""


async def test_text_ending_like_the_start_of_a_tag_is_shown_whole(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("so the answer is x <"))
    response, shown = await stream(fake_llm)
    assert response.content == shown == "so the answer is x <"


async def test_text_that_arrives_at_once_is_shown_in_one_piece(fake_llm: FakeLLM) -> None:
    fake_llm.script(Text("every word of it at once", chunk_chars=4))  # one write of seven chunks
    deltas: list[str] = []
    response = await provider(fake_llm).chat(USER, on_delta=deltas.append)
    assert deltas == [response.content] == ["every word of it at once"]


async def test_an_error_event_after_text_in_the_same_read_shows_the_text_and_is_reported_as_broken(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script(Text("half of the answer", cut_after=2, cut="error"), Text("never asked"))
    deltas: list[str] = []
    with pytest.raises(StreamBroken):
        await provider(fake_llm).chat(USER, on_delta=deltas.append)
    assert "".join(deltas) == "half of the answ"
    assert len(fake_llm.requests) == 1
