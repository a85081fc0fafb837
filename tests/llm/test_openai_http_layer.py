"""The direct path's HTTP layer: events of any size, its failures always ours, litellm never loaded, cancels close."""

import asyncio
import builtins
import gc
import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from bot.config.schema import LLMConfig
from bot.errors import ProviderError
from bot.llm.failures import Evidence, answer_error_evidence
from bot.llm.provider import ModelProvider
from bot.llm.transports.openai_http import GarbledAnswer, read_answer
from bot.retry import RetryPolicy
from tests.fakes.openai_server import Error, FakeLLM, Hang, Reply, Text, ToolCalls

USER = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    ("error", "mid_stream", "evidence"),
    [
        ({"code": 502, "message": "Provider returned error"}, True, Evidence(status=502)),
        ({"code": "429", "message": "slow down"}, False, Evidence(status=429)),
        ({"message": "This model's maximum context length is 8192 tokens"}, True, Evidence(kind="overflow")),
        ({"message": "The server had an error", "code": None}, True, Evidence(kind="transient")),
        ({"message": "upstream failed", "code": None}, False, Evidence(kind="unknown")),
        ({"message": "bad"}, False, Evidence(status=422)),
    ],
)
def test_an_error_inside_a_200_answer_is_read_as_litellm_reads_it(
    error: dict[str, Any], mid_stream: bool, evidence: Evidence
) -> None:
    assert answer_error_evidence(error, mid_stream) == evidence


@pytest.fixture
def litellm_blocked(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """`import litellm` fails, and every attempt is recorded (an error path must never pay for that import)."""
    attempts: list[str] = []
    real_import = builtins.__import__

    def guarded(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.split(".")[0] == "litellm":
            attempts.append(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
    monkeypatch.setitem(sys.modules, "litellm", None)
    yield attempts


FAILURES: list[Reply] = [
    Error(401),
    Error(404),
    Error(413),
    Error(422),
    Error(400, "This model's maximum context length is 8192 tokens"),
    Error(503),
    Error(200, "upstream failed"),
    Error(200, body="<html>Bad Gateway</html>"),
]
STREAM_FAILURES: list[Reply] = [
    Text("half of it", cut_after=0),
    Text("half of it", cut_after=2, cut="drop"),
    Text("half of it", cut_after=0, cut="error"),
    Text("half of it", cut_after=2, cut="error"),
    Text("half of it", cut_after=0, cut="garbage"),
    ToolCalls((("lookup", {"query": "x" * 1_000_000}),), chunk_chars=2**21, cut_after=1, cut="drop"),
]


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
async def test_every_failure_is_our_error_and_never_imports_litellm(
    fake_llm: FakeLLM, litellm_blocked: list[str], streamed: bool
) -> None:
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake_llm.base_url)
    provider = ModelProvider(config, RetryPolicy(attempts=1))
    for reply in FAILURES + (STREAM_FAILURES if streamed else []):
        refused_stream = streamed and isinstance(reply, Error) and reply.status == 422
        fake_llm.script(*([reply, reply] if refused_stream else [reply]))  # a refused stream is retried whole
        with pytest.raises(ProviderError):
            await provider.chat(USER, on_delta=(lambda _: None) if streamed else None)
    await provider.aclose()
    assert litellm_blocked == []


@pytest.mark.parametrize(
    ("reply", "streamed"),
    [
        (Hang(), True),
        (Hang(), False),
        (Text("half of the answer", cut_after=2, cut="stall"), True),
    ],
    ids=["waiting-streamed", "waiting-whole", "mid-stream"],
)
async def test_a_cancelled_call_closes_its_connection_at_once(fake_llm: FakeLLM, reply: Reply, streamed: bool) -> None:
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake_llm.base_url)
    provider = ModelProvider(config)
    shown = asyncio.Event()
    fake_llm.script(reply)
    call = asyncio.create_task(provider.chat(USER, on_delta=(lambda _: shown.set()) if streamed else None))
    await fake_llm.wait_for_requests(1)
    if isinstance(reply, Text):
        await shown.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    # No garbage collection, no pool clean-up: the server sees the close while the provider is still open.
    await asyncio.wait_for(fake_llm.wait_for_disconnects(1), 5)
    await provider.aclose()


def test_a_garbled_answer_says_what_it_got() -> None:

    with pytest.raises(GarbledAnswer, match="Bad Gateway"):
        read_answer(b"<html>Bad Gateway</html>")


@pytest.fixture
def no_garbage_collection() -> Iterator[None]:
    """Nothing left for the garbage collector to close: what is not closed at once stays open."""
    gc.disable()
    yield
    gc.enable()


@pytest.mark.usefixtures("no_garbage_collection")
async def test_a_stream_abandoned_midway_closes_its_connection_at_once(fake_llm: FakeLLM) -> None:
    config = LLMConfig(model="openai/fake-model", api_key="sk-test", api_base=fake_llm.base_url)
    provider = ModelProvider(config, RetryPolicy(attempts=1))
    fake_llm.script(Text("half of the answer", cut_after=2, cut="stall"))

    def channel_fails(text: str) -> None:
        raise RuntimeError("the chat went away")

    with pytest.raises(ProviderError) as failure:
        await provider.chat(USER, on_delta=channel_fails)
    # The error, still held (as a log record or a retry would), keeps the call's frames alive.
    await asyncio.wait_for(fake_llm.wait_for_disconnects(1), 5)
    assert isinstance(failure.value.__cause__, RuntimeError)
    await provider.aclose()


async def test_a_stream_whose_body_ends_after_its_done_keeps_its_connection_for_the_next_call() -> None:
    from aiohttp import web

    from bot.llm.transports.openai_http import OpenAICompatible
    from tests.fakes.loopback import LoopbackSite
    from tests.support.polling import until

    peers: list[object] = []
    gate = asyncio.Event()

    async def answer(request: web.Request) -> web.StreamResponse:
        peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}
        await response.write(f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode())
        await gate.wait()  # the body's end comes after the client has read [DONE]
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    site = LoopbackSite(app)
    client = OpenAICompatible(f"http://127.0.0.1:{await site.start()}/v1")
    try:
        for _ in range(2):
            stream = await client.acompletion(model="openai/m", messages=USER, stream=True)
            assert [chunk["choices"][0]["delta"]["content"] async for chunk in stream] == ["hi"]
            assert stream.received_finish_reason == "stop"
            gate.set()
            response = stream._response
            await until(lambda response=response: response.closed, timeout=5)
            gate.clear()
        assert len(peers) == 2 and peers[0] == peers[1]
    finally:
        gate.set()
        await client.aclose()
        await site.stop()
