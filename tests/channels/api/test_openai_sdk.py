"""The official `openai` SDK with its defaults (two retries) against /v1/chat/completions: a failed run runs once,
refusals are readable, and a client that leaves a stream early is no error."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import openai
import pytest

from bot.events import TurnFinished
from tests.channels.api.conftest import OWNER_TOKEN, ApiBot
from tests.fakes.openai_server import Error, FakeLLM, Text
from tests.support.harness import next_event
from tests.support.polling import until

ASK = [{"role": "user", "content": "hello"}]


def client(bot: ApiBot, token: str = OWNER_TOKEN, **options: object) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(api_key=token, base_url=f"{bot.url}/v1", **options)  # type: ignore[arg-type]


async def test_a_failed_run_runs_once_under_the_sdks_retries(api_bot: ApiBot, fake_llm: FakeLLM) -> None:
    fake_llm.script(*[Error(400, "the model refused the request")] * 2)  # one turn (streamed, then not); then echo
    async with client(api_bot) as sdk:
        with pytest.raises(openai.InternalServerError) as refused:
            await sdk.chat.completions.create(model="relaybot", messages=ASK, user="once")
    assert refused.value.response.headers["x-should-retry"] == "false"
    assert len(fake_llm.requests) == 2  # one turn's calls: the SDK did not run it again
    assert refused.value.body["code"] == "run_failed"  # type: ignore[index]
    async with aiohttp.ClientSession() as http, http.get(f"{api_bot.url}/metrics") as response:
        metrics = await response.text()
    calls = [line for line in metrics.splitlines() if line.startswith("relaybot_llm_calls_total")]
    # one failed call (tried streamed, then not)
    assert calls == ['relaybot_llm_calls_total{model="openai/fake-model",outcome="RequestRejected"} 1.0']


async def test_a_repeat_under_the_same_idempotency_key_gets_the_first_outcome(
    api_bot: ApiBot, fake_llm: FakeLLM
) -> None:
    fake_llm.script(Text("first answer"), Text("second answer"))
    async with client(api_bot) as sdk:
        key = {"Idempotency-Key": "order-17"}
        first = await sdk.chat.completions.create(model="relaybot", messages=ASK, extra_headers=key)
        again = await sdk.chat.completions.create(model="relaybot", messages=ASK, extra_headers=key)
        other = await sdk.chat.completions.create(model="relaybot", messages=ASK)
    assert again.id == first.id and again.choices[0].message.content == "first answer"
    assert other.choices[0].message.content == "second answer" and len(fake_llm.requests) == 2


async def test_a_wrong_token_and_the_lockout_are_readable_errors(
    api_bot: ApiBot, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="channels.api.gate")
    async with client(api_bot, "wrong", max_retries=0) as sdk:
        for _ in range(5):
            with pytest.raises(openai.AuthenticationError) as refused:
                await sdk.models.list()
            assert "a valid API token is needed" in str(refused.value)
            assert refused.value.code == "invalid_api_key"
        with pytest.raises(openai.RateLimitError) as locked:
            await sdk.models.list()
    assert "too many wrong tokens from this address; try again in 60s" in str(locked.value)
    assert locked.value.response.headers["Retry-After"] == "60"
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == ["API: 127.0.0.1 sent too many wrong tokens; refused for a minute"]


@pytest.mark.parametrize("leave", ["completion", "events"])
async def test_a_client_leaving_a_stream_early_logs_no_error(
    api_bot: ApiBot, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture, leave: str
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_llm.script(Text("one two three four five six seven eight nine ten " * 20, chunk_chars=4, chunk_delay=0.01))
    finished = asyncio.create_task(next_event(api_bot.gateway.agent.events, TurnFinished, timeout=30))
    if leave == "completion":
        async with client(api_bot) as sdk:
            stream = await sdk.chat.completions.create(model="relaybot", messages=ASK, stream=True)
            async for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content:
                    break
            await stream.close()
    else:
        headers = {"Authorization": f"Bearer {OWNER_TOKEN}"}
        async with aiohttp.ClientSession(headers=headers) as http:
            async with http.post(f"{api_bot.url}/v1/agent", json={"message": "hello"}) as started:
                run = (await started.json())["runId"]
            async with http.get(f"{api_bot.url}/v1/agent/events", params={"runId": run}) as events:
                await events.content.readline()
    await finished
    await until(lambda: any("the client left" in r.getMessage() for r in caplog.records), 10)  # at its next write
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
