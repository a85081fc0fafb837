"""The OpenAI-compatible endpoint, driven by the real `openai` client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import openai
import pytest
import pytest_asyncio

from tests.channels.api.conftest import OWNER_TOKEN, ApiBot
from tests.fakes.openai_server import Error, Text, ToolCalls


@pytest_asyncio.fixture
async def clients(api_bot: ApiBot) -> AsyncIterator[Callable[..., openai.AsyncOpenAI]]:
    """Makes `openai` clients for the bot's endpoint, closing them after the test."""
    made: list[openai.AsyncOpenAI] = []

    def make(bot: ApiBot, token: str = OWNER_TOKEN) -> openai.AsyncOpenAI:
        made.append(openai.AsyncOpenAI(api_key=token, base_url=f"{bot.url}/v1", max_retries=0))
        return made[-1]

    yield make
    for client in made:
        await client.close()


async def test_models_lists_relaybot(api_bot: ApiBot, clients) -> None:
    models = await clients(api_bot).models.list()
    assert [m.id for m in models.data] == ["relaybot"]


async def test_completion_comes_from_the_agent_with_its_tools(api_bot: ApiBot, fake_llm, clients) -> None:
    (api_bot.config.workspace / "notes.txt").write_text("the answer is 42")
    fake_llm.script(ToolCalls((("read_file", {"path": "notes.txt"}),)), Text("It says 42."))
    completion = await clients(api_bot).chat.completions.create(
        model="relaybot", messages=[{"role": "system", "content": "ignored"}, {"role": "user", "content": "read it"}]
    )
    assert completion.choices[0].message.content == "It says 42."
    assert completion.choices[0].finish_reason == "stop"
    tool_result = [m for m in fake_llm.requests[-1]["messages"] if m["role"] == "tool"]
    assert "the answer is 42" in tool_result[0]["content"]


async def test_user_field_picks_the_session(api_bot: ApiBot, fake_llm, clients) -> None:
    seen: list[str] = []
    api_bot.gateway.agent.events.subscribe(lambda e: seen.append(e.session_key) if hasattr(e, "turn_id") else None)
    api = clients(api_bot)
    await api.chat.completions.create(model="relaybot", messages=[{"role": "user", "content": "a"}])
    await api.chat.completions.create(model="relaybot", messages=[{"role": "user", "content": "b"}], user="alice")
    assert "api:me:default" in seen and "api:me:alice" in seen


async def test_streaming_completion_arrives_as_chunks(api_bot: ApiBot, fake_llm, clients) -> None:
    text = "A reply long enough to arrive in several pieces, streamed as it is written."
    fake_llm.script(Text(text, chunk_delay=0.01))  # written piece by piece (what arrives at once is one piece)
    stream = await clients(api_bot).chat.completions.create(
        model="relaybot", messages=[{"role": "user", "content": "go"}], stream=True
    )
    pieces = [chunk.choices[0].delta.content async for chunk in stream if chunk.choices[0].delta.content]
    assert len(pieces) > 1 and "".join(pieces) == text


async def test_model_failure_is_a_server_error(api_bot: ApiBot, fake_llm, clients) -> None:
    fake_llm.script(*[Error(400, "bad request")] * 3)
    with pytest.raises(openai.InternalServerError):
        await clients(api_bot).chat.completions.create(model="relaybot", messages=[{"role": "user", "content": "x"}])


async def test_wrong_token_is_refused(api_bot: ApiBot, clients) -> None:
    with pytest.raises(openai.AuthenticationError):
        await clients(api_bot, "wrong").models.list()


async def test_request_without_user_message_is_a_bad_request(api_bot: ApiBot, clients) -> None:
    with pytest.raises(openai.BadRequestError):
        await clients(api_bot).chat.completions.create(model="relaybot", messages=[{"role": "system", "content": "x"}])


async def test_usage_counts_every_model_call_of_the_run(api_bot: ApiBot, fake_llm, clients) -> None:
    fake_llm.script(ToolCalls((("list_dir", {"path": "."}),)), Text("Two calls made."))
    completion = await clients(api_bot).chat.completions.create(
        model="relaybot", messages=[{"role": "user", "content": "look"}]
    )
    assert len(fake_llm.reported) == 2 and completion.usage is not None
    assert completion.usage.prompt_tokens == sum(u["prompt_tokens"] for u in fake_llm.reported) > 0
    assert completion.usage.completion_tokens == sum(u["completion_tokens"] for u in fake_llm.reported) > 0
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens


async def test_finish_reason_is_the_models(api_bot: ApiBot, fake_llm, clients) -> None:
    fake_llm.script(Text("A reply the model had to cut", finish_reason="length"))
    completion = await clients(api_bot).chat.completions.create(
        model="relaybot", messages=[{"role": "user", "content": "go on"}]
    )
    assert completion.choices[0].finish_reason == "length"


async def test_a_stream_ends_with_the_models_finish_reason_and_usage(api_bot: ApiBot, fake_llm, clients) -> None:
    fake_llm.script(Text("Streamed and counted.", finish_reason="length"))
    stream = await clients(api_bot).chat.completions.create(
        model="relaybot",
        messages=[{"role": "user", "content": "go"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    reasons = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert reasons == ["length"]
    assert (
        chunks[-1].usage is not None
        and chunks[-1].usage.completion_tokens == fake_llm.reported[-1]["completion_tokens"]
    )


async def test_a_clients_own_conversation_is_honoured_statelessly(api_bot: ApiBot, fake_llm, clients) -> None:
    api = clients(api_bot)
    conversation = [
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": "What is 2+2?"},
        {"role": "assistant", "content": "Four, matey."},
        {"role": "user", "content": "And 3+3?"},
    ]
    await api.chat.completions.create(model="relaybot", messages=conversation)
    sent = fake_llm.requests[-1]["messages"]
    assert [(m["role"], m["content"]) for m in sent[1:4]] == [(m["role"], m["content"]) for m in conversation[:3]]
    assert sent[4]["content"].endswith("And 3+3?") and len(sent) == 5
    await api.chat.completions.create(
        model="relaybot", messages=[{"role": "system", "content": "Be terse."}, {"role": "user", "content": "Hi"}]
    )
    again = fake_llm.requests[-1]["messages"]
    assert [m["content"] for m in again[1:-1]] == ["Be terse."]  # nothing of the first call comes back


async def test_with_user_the_session_keeps_the_history(api_bot: ApiBot, fake_llm, clients) -> None:
    api = clients(api_bot)
    await api.chat.completions.create(model="relaybot", messages=[{"role": "user", "content": "one"}], user="bo")
    await api.chat.completions.create(
        model="relaybot",
        messages=[{"role": "system", "content": "ignored"}, {"role": "user", "content": "two"}],
        user="bo",
    )
    sent = [m["content"] for m in fake_llm.requests[-1]["messages"][1:]]
    assert sent[0].endswith("one") and sent[1] == "echo: " + sent[0] and sent[-1].endswith("two")
    assert "ignored" not in sent
